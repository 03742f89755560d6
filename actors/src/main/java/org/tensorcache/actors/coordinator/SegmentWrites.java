package org.tensorcache.actors.coordinator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.actors.cache.RangeId;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.cache.WriteBackoff;
import org.tensorcache.actors.coordinator.CoordinatorState.RangePersisted;

/**
 * The bookkeeping of the segments a {@link FillDriver} writes, for ranges whose values are
 * gossiped: one write at a time per range, none again once one was durable, and a range counts as
 * persisted only once its write is durable. A write that failed for I/O (a full disk) is tried
 * again by a later tick once its range's {@link WriteBackoff} allows; any other failure is a fault
 * of the driver, which restarts from the manifest. The driver starts the writes.
 */
final class SegmentWrites {
  private static final Logger log = LoggerFactory.getLogger(SegmentWrites.class);

  private final TensorCacheNode node;
  private final Set<RangeId> writing = new HashSet<>();
  // durable and told to the coordinator, which may not have recorded them yet
  private final Set<RangeId> durable = new HashSet<>();
  private final Map<RangeId, WriteBackoff> failed = new HashMap<>();

  SegmentWrites(TensorCacheNode node) {
    this.node = node;
  }

  /**
   * Whether the segment of the range is to be written now, and if so marks its write under way: not
   * while one is, nor once one was durable, nor less than its backoff after a failed one.
   */
  boolean start(String cacheId, int range) {
    RangeId id = RangeId.of(cacheId, range);
    WriteBackoff backoff = failed.get(id);
    if (durable.contains(id) || (backoff != null && !backoff.due())) {
      return false;
    }
    return writing.add(id);
  }

  /**
   * A write ended: the event to record when it is durable, else null (it is tried again after its
   * backoff).
   *
   * @throws IllegalStateException when it failed for another reason than I/O
   */
  RangePersisted written(String cacheId, int range, Throwable failure) {
    RangeId id = RangeId.of(cacheId, range);
    writing.remove(id);
    if (failure != null) {
      Throwable cause =
          failure instanceof CompletionException && failure.getCause() != null
              ? failure.getCause()
              : failure;
      if (!(cause instanceof UncheckedIOException || cause instanceof IOException)) {
        throw new IllegalStateException(
            "segment of range " + range + " of " + cacheId + " not written: " + cause, cause);
      }
      WriteBackoff backoff = failed.computeIfAbsent(id, k -> WriteBackoff.of(node.settings()));
      long retryMs = backoff.failed().toMillis();
      log.error(
          "segment of range {} of {} not written ({} in a row, tried again in {} ms): {}",
          range,
          cacheId,
          backoff.failures(),
          retryMs,
          cause.toString());
      return null;
    }
    failed.remove(id);
    durable.add(id);
    node.metrics().rangePersisted(cacheId, node.definition(cacheId).spec().rangeLength(range));
    return new RangePersisted(cacheId, range);
  }
}
