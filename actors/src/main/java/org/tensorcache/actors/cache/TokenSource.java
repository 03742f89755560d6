package org.tensorcache.actors.cache;

import java.util.function.Supplier;
import org.tensorcache.model.runner.TokenRunner;
import org.tensorcache.store.rows.RowBlock;
import org.tensorcache.store.segment.Segments;

/**
 * What a per-token cache computes and keeps in place of a fixed-shape cache's runners and blocks:
 * its token runners (one per compute thread) and the store of its ranges of rows.
 */
public record TokenSource(Supplier<TokenRunner> runners, Segments<RowBlock> segments) {}
