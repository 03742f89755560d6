package org.tensorcache.actors.lookup;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.pattern.StatusReply;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.cache.RowTier;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.session.Sampler;
import org.tensorcache.actors.shard.RowShard;
import org.tensorcache.actors.shard.ShardActor;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.fields.RaggedValues;
import org.tensorcache.store.rows.RowBlock;
import org.tensorcache.store.rows.RowCodec;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.tier.Tier;

/**
 * Lookups of per-token caches: each row from the node's {@link RowTier} (hot), else from its
 * range's verified segment (warm, then kept), else from the range's shard (cold, computed first
 * when missing), and every row decoded into its fields once, in request order.
 */
public final class RowLookup {
  private static final Logger log = LoggerFactory.getLogger(RowLookup.class);

  private final ActorSystem<?> system;
  private final TensorCacheNode node;
  private final RowTier tier;

  RowLookup(ActorSystem<?> system, TensorCacheNode node) {
    this.system = system;
    this.node = node;
    this.tier = node.rowTier();
  }

  /** The values of {@code indices} (checked for count already), complete or an error. */
  RaggedValues lookup(CacheDefinition cache, long[] indices) {
    CacheSpec spec = cache.spec();
    if (!spec.perToken()) {
      throw new IllegalArgumentException(
          "cache '"
              + cache.cacheId()
              + "' has fixed-shape fields: expected a lookup of values, not rows");
    }
    int[] tokens = new int[indices.length];
    byte[][] rows = new byte[indices.length][];
    Map<Integer, List<Integer>> cold = new LinkedHashMap<>();
    int hot = 0;
    int warm = 0;
    for (int i = 0; i < indices.length; i++) {
      long index = indices[i];
      if (index < 0 || index >= spec.n()) {
        throw new IllegalArgumentException(
            String.format(
                "index %d at position %d is out of range for cache '%s', expected 0..%d",
                index, i, cache.cacheId(), spec.n() - 1));
      }
      int range = spec.rangeOf(index);
      RowBlock kept = tier.get(cache.cacheId(), range);
      if (kept == null) {
        kept = read(cache, range);
        warm += kept == null ? 0 : 1;
      } else {
        hot++;
      }
      if (kept == null) {
        cold.computeIfAbsent(range, r -> new ArrayList<>()).add(i);
      } else {
        tokens[i] = kept.tokens(index);
        rows[i] = kept.row(index);
      }
    }
    tier.served(cache.cacheId(), Tier.HOT, hot);
    tier.served(cache.cacheId(), Tier.WARM, warm);
    if (!cold.isEmpty()) {
      fromShards(cache, indices, cold, tokens, rows);
    }
    return decode(spec, tokens, rows);
  }

  /**
   * Brings the ranges of a trainer's {@code steps} steps from {@code from} on into the tier, off
   * the caller's thread, in step order.
   */
  void prefetch(CacheDefinition cache, Sampler sampler, int rank, long from, int steps) {
    CacheSpec spec = cache.spec();
    java.util.Set<Integer> ranges = new java.util.LinkedHashSet<>();
    for (long step = from; step < from + steps; step++) {
      long[] indices;
      try {
        indices = sampler.indices(step, rank);
      } catch (IllegalArgumentException outsideTheWorld) {
        break; // the rank has no share of that step
      }
      for (long index : indices) {
        ranges.add(spec.rangeOf(index));
      }
    }
    CompletableFuture.runAsync(() -> ranges.forEach(r -> read(cache, r)), node.ioExecutor());
  }

  /** The rows of a range from its segment, kept in the tier; null when it has none (yet). */
  private RowBlock read(CacheDefinition cache, int range) {
    try {
      return tier.load(cache, range);
    } catch (java.io.IOException | RuntimeException e) {
      log.warn("segment of range {} of {} not read: {}", range, cache.cacheId(), e.toString());
      return null;
    }
  }

  /** Asks each range's shard for the rows not held here, in parts under the reply limit. */
  private void fromShards(
      CacheDefinition cache,
      long[] indices,
      Map<Integer, List<Integer>> cold,
      int[] tokens,
      byte[][] rows) {
    Duration wait = node.settings().lookupMaxWait();
    long deadline = System.nanoTime() + wait.toNanos();
    int served = 0;
    for (Map.Entry<Integer, List<Integer>> e : cold.entrySet()) {
      List<Integer> positions = e.getValue();
      var shard =
          ClusterSharding.get(system)
              .entityRefFor(
                  ShardActor.ENTITY_KEY, ShardActor.entityId(cache.cacheId(), e.getKey()));
      int from = 0;
      while (from < positions.size()) {
        long[] wanted = new long[positions.size() - from];
        for (int k = 0; k < wanted.length; k++) {
          wanted[k] = indices[positions.get(from + k)];
        }
        Duration left = Duration.ofNanos(Math.max(1, deadline - System.nanoTime()));
        RowShard.ComputedRows answer =
            await(
                shard.askWithStatus(
                    (org.apache.pekko.actor.typed.ActorRef<StatusReply<RowShard.ComputedRows>>
                            to) ->
                        new RowShard.ComputeRows(wanted, node.settings().maxReplyBytes(), to),
                    left),
                cache,
                wanted.length,
                left);
        for (int k = 0; k < answer.indices().length; k++) {
          int position = positions.get(from + k);
          if (answer.indices()[k] != indices[position]) {
            throw new LookupFailedException(
                "shard answered index " + answer.indices()[k] + ", expected " + indices[position],
                null);
          }
          tokens[position] = answer.tokens()[k];
          rows[position] = answer.rows()[k];
        }
        from += answer.indices().length;
        served += answer.indices().length;
      }
    }
    tier.served(cache.cacheId(), Tier.COLD, served);
  }

  private static RowShard.ComputedRows await(
      java.util.concurrent.CompletionStage<RowShard.ComputedRows> reply,
      CacheDefinition cache,
      int count,
      Duration wait) {
    try {
      return reply.toCompletableFuture().get(wait.toMillis() + 500, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      throw new LookupFailedException(
          "rows of cache '" + cache.cacheId() + "' not served: " + cause.getMessage(), cause);
    } catch (TimeoutException e) {
      throw new LookupFailedException(
          String.format(
              "lookup of %d rows of cache '%s' not answered within %d ms",
              count, cache.cacheId(), wait.toMillis()),
          e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LookupFailedException("interrupted while the rows were computed", e);
    }
  }

  /** Decodes every row into its fields, in request order. */
  public static RaggedValues decode(CacheSpec spec, int[] tokens, byte[][] rows) {
    long[] offsets = new long[tokens.length + 1];
    for (int i = 0; i < tokens.length; i++) {
      offsets[i + 1] = offsets[i] + tokens[i];
    }
    int total = Math.toIntExact(offsets[tokens.length]);
    List<FieldSpec> fields = spec.fields();
    Object[] values = new Object[fields.size()];
    for (int f = 0; f < values.length; f++) {
      values[f] = fields.get(f).dtype().newArray(Math.multiplyExact(total, fields.get(f).width()));
    }
    RowCodec codec = RowCodec.of(spec);
    for (int i = 0; i < rows.length; i++) {
      codec.decode(rows[i], 0, rows[i].length, tokens[i], values, (int) offsets[i]);
    }
    return new RaggedValues(offsets, values);
  }
}
