package org.tensorcache.launch;

import java.nio.file.Path;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/** A prepared cache job: the data set, the cache's spec and fingerprint, and where it lives. */
public record Job(
    ExampleSet data,
    CacheSpec spec,
    Fingerprint fingerprint,
    Path cacheDir,
    CacheDefinition definition) {}
