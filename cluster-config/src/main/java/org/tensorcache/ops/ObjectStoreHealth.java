package org.tensorcache.ops;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.store.objects.ObjectSegmentStore;
import org.tensorcache.store.objects.ObjectStorage;

/**
 * Whether the object storage this node's caches keep their segments in answers: the outcome of the
 * last request (segment reads and writes, each retried with backoff), refreshed by one probe per
 * readiness check, so an outage shows while nothing is being written too.
 */
final class ObjectStoreHealth {
  /** How long a readiness check waits for a probe (under Pekko Management's check timeout). */
  private static final long PROBE_WAIT_MS = 2_000;

  private ObjectStoreHealth() {}

  /** Each object storage a cache of {@code node} uses, with one bucket to probe it with. */
  static Map<ObjectStorage, String> stores(TensorCacheNode node) {
    Map<ObjectStorage, String> out = new IdentityHashMap<>();
    for (CacheDefinition d : node.definitions()) {
      if (d.segments() instanceof ObjectSegmentStore<?> s) {
        out.putIfAbsent(s.storage(), s.location().bucket());
      }
    }
    return out;
  }

  /**
   * Probes every store once, on {@code io}; completes with why one is unreachable, or empty when
   * all answered (or there are none). A probe that has not answered in time counts as unreachable.
   */
  static CompletionStage<Optional<String>> check(TensorCacheNode node, Executor io) {
    List<CompletableFuture<Optional<String>>> probes = new ArrayList<>();
    stores(node)
        .forEach(
            (storage, bucket) ->
                probes.add(
                    CompletableFuture.supplyAsync(
                            () ->
                                storage.probe(bucket)
                                    ? Optional.<String>empty()
                                    : storage.unreachable(),
                            io)
                        .completeOnTimeout(
                            Optional.of("object storage did not answer a probe in time"),
                            PROBE_WAIT_MS,
                            TimeUnit.MILLISECONDS)));
    return CompletableFuture.allOf(probes.toArray(CompletableFuture[]::new))
        .thenApply(
            ok ->
                probes.stream().map(CompletableFuture::join).flatMap(Optional::stream).findFirst());
  }
}
