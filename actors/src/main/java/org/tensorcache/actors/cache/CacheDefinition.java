package org.tensorcache.actors.cache;

import java.nio.file.Path;
import java.util.Map;
import java.util.function.Supplier;
import org.tensorcache.model.batch.BatchPlanner;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.RunnerIdentity;
import org.tensorcache.model.runner.TokenRunner;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.rows.RowBlock;
import org.tensorcache.store.segment.SegmentCodec;
import org.tensorcache.store.segment.SegmentStore;
import org.tensorcache.store.segment.Segments;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;
import org.tensorcache.store.spec.FingerprintInputs;

/**
 * Everything a node needs to compute, keep and serve one cache: its spec and fingerprint, the data
 * set the indices refer to, how to make a runner (one per compute thread), where its segments live
 * ({@code segments}: a local directory or object storage; {@code segmentDir} is this node's
 * directory of them, or of verified copies of the objects), and how a range's rows are grouped for
 * computing ({@code planner}: a pure function of the rows, so a row's bits do not depend on which
 * node or request computes it), and the inputs it was filled from as a trainer checks them ({@code
 * inputs}: data set, model and tokenizer digests, truncation; served to clients and written into
 * exports). A per-token cache has {@code tokens} in place of {@code runners} and {@code segments}
 * ({@link #perToken}); a cache of fixed-shape fields has no {@code tokens}.
 */
public record CacheDefinition(
    CacheSpec spec,
    Fingerprint fingerprint,
    ExampleSet data,
    Supplier<ModelRunner> runners,
    Path segmentDir,
    BatchPlanner planner,
    Map<String, String> inputs,
    Segments<Block> segments,
    TokenSource tokens) {

  /**
   * Most ranges a cache may have: each is a Distributed Data key, and Distributed Data is meant for
   * well under 100,000 of them (it gossips and hands joining nodes the full set).
   */
  public static final int MAX_RANGES = 50_000;

  /** Checks that the parts belong together. */
  public CacheDefinition {
    if (spec.rangeCount() > MAX_RANGES) {
      throw new IllegalArgumentException(
          String.format(
              "cache '%s' has %d ranges, more than %d: raise the range size %d",
              spec.name(), spec.rangeCount(), MAX_RANGES, spec.rangeSize()));
    }
    if (data.size() != spec.n()) {
      throw new IllegalArgumentException(
          "data set has "
              + data.size()
              + " examples, cache '"
              + spec.name()
              + "' expects "
              + spec.n());
    }
    fingerprint.checkBelongsTo(spec);
    if (spec.perToken() != (tokens != null) || spec.perToken() == (segments != null)) {
      throw new IllegalArgumentException(
          "cache '"
              + spec.name()
              + (spec.perToken()
                  ? "' has per-token fields: expected token runners and a store of rows"
                  : "' has fixed-shape fields: expected runners and a store of blocks"));
    }
    inputs = java.util.Collections.unmodifiableSortedMap(new java.util.TreeMap<>(inputs));
  }

  /** A cache whose segments are kept in the local directory {@code segmentDir}. */
  public CacheDefinition(
      CacheSpec spec,
      Fingerprint fingerprint,
      ExampleSet data,
      Supplier<ModelRunner> runners,
      Path segmentDir,
      BatchPlanner planner,
      Map<String, String> inputs) {
    this(
        spec,
        fingerprint,
        data,
        runners,
        segmentDir,
        planner,
        inputs,
        SegmentStore.at(segmentDir, spec, fingerprint),
        null);
  }

  /**
   * A per-token cache whose ranges of rows {@code runners} compute and whose segments are kept in
   * the local directory {@code segmentDir}.
   */
  public static CacheDefinition perToken(
      CacheSpec spec,
      Fingerprint fingerprint,
      ExampleSet data,
      Supplier<TokenRunner> runners,
      Path segmentDir,
      BatchPlanner planner,
      Map<String, String> inputs) {
    return new CacheDefinition(
        spec,
        fingerprint,
        data,
        null,
        segmentDir,
        planner,
        inputs,
        null,
        new TokenSource(
            runners, SegmentStore.at(SegmentCodec.ROWS, segmentDir, spec, fingerprint)));
  }

  /** A cache with no recorded inputs beyond its fingerprint. */
  public CacheDefinition(
      CacheSpec spec,
      Fingerprint fingerprint,
      ExampleSet data,
      Supplier<ModelRunner> runners,
      Path segmentDir,
      BatchPlanner planner) {
    this(spec, fingerprint, data, runners, segmentDir, planner, Map.of());
  }

  /** The same cache with these recorded inputs. */
  public CacheDefinition withInputs(Map<String, String> recorded) {
    return new CacheDefinition(
        spec, fingerprint, data, runners, segmentDir, planner, recorded, segments, tokens);
  }

  /**
   * The same cache with its segments kept in {@code store} (object storage, whose verified local
   * copies go to {@code localDir}).
   */
  public CacheDefinition withSegments(Segments<Block> store, Path localDir) {
    return new CacheDefinition(
        spec, fingerprint, data, runners, localDir, planner, inputs, store, null);
  }

  /**
   * The same per-token cache with its rows kept in {@code store} (object storage, whose verified
   * local copies go to {@code localDir}).
   */
  public CacheDefinition withRowSegments(Segments<RowBlock> store, Path localDir) {
    return new CacheDefinition(
        spec,
        fingerprint,
        data,
        null,
        localDir,
        planner,
        inputs,
        null,
        new TokenSource(tokens.runners(), store));
  }

  /** A cache whose ranges are computed in consecutive groups of {@code microBatch} rows. */
  public CacheDefinition(
      CacheSpec spec,
      Fingerprint fingerprint,
      ExampleSet data,
      Supplier<ModelRunner> runners,
      Path segmentDir,
      int microBatch) {
    this(spec, fingerprint, data, runners, segmentDir, BatchPlanner.fixed(microBatch));
  }

  /** The fingerprint of what {@code runner} computes for {@code data} laid out as {@code spec}. */
  public static Fingerprint fingerprint(ModelRunner runner, ExampleSet data, CacheSpec spec) {
    return fingerprint(RunnerIdentity.of(runner), data, spec);
  }

  /**
   * The fingerprint of what a runner of {@code identity} computes for {@code data} laid out as
   * {@code spec}: the same as its loaded runner's, known without loading it.
   */
  public static Fingerprint fingerprint(RunnerIdentity identity, ExampleSet data, CacheSpec spec) {
    return Fingerprint.of(
        new FingerprintInputs(
            identity.id(),
            identity.version(),
            identity.weightsDigest(),
            data.digest(),
            identity.parameters(),
            spec));
  }

  /** Where the cache's segments are kept, whatever its values are. */
  public Segments<?> store() {
    return tokens != null ? tokens.segments() : segments;
  }

  /** The cache id, derived from the fingerprint. */
  public String cacheId() {
    return fingerprint.cacheId();
  }
}
