package org.tensorcache.actors.lookup;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.pattern.StatusReply;
import org.tensorcache.actors.cache.NodeSettings;
import org.tensorcache.actors.cache.RangeId;
import org.tensorcache.actors.shard.ShardActor;
import org.tensorcache.store.spec.CacheSpec;

/**
 * The missing part of one lookup, a child of the node's {@link LookupActor} that lives as long as
 * the request: asks the shard of every range that holds missing positions to compute them, asks a
 * silent shard again (the request is idempotent: the shard may have moved, or the node it was on
 * died with the request), writes each answer into place, answers once, and stops.
 */
final class LookupQuery {
  /** What a query receives: the answer of one part. */
  record PartDone(Part part, ShardActor.Computed computed, Throwable failure) {}

  /** The positions of the request that one range's shard is asked for, and how often so far. */
  record Part(int range, int[] positions, long[] indices, int attempt) {
    Part next() {
      return new Part(range, positions, indices, attempt + 1);
    }
  }

  /**
   * The request: {@code values} (per field, {@code indices.length * width} elements) hold every
   * position but {@code missing}, which the query fills; answered with {@code values} when whole.
   */
  record Request(
      String cacheId,
      CacheSpec spec,
      long[] indices,
      int[] missing,
      Object[] values,
      ActorRef<StatusReply<LookupActor.Values>> replyTo) {}

  private final ActorContext<PartDone> ctx;
  private final Request request;
  private final NodeSettings settings;
  private final LookupActor.ClusterChanges changes;
  private final ClusterSharding sharding;
  private final long start = System.nanoTime();
  private int parts;

  private LookupQuery(
      ActorContext<PartDone> ctx,
      Request request,
      NodeSettings settings,
      LookupActor.ClusterChanges changes) {
    this.ctx = ctx;
    this.request = request;
    this.settings = settings;
    this.changes = changes;
    this.sharding = ClusterSharding.get(ctx.getSystem());
  }

  /** The query of {@code request}, whose deadline follows {@code changes}. */
  static Behavior<PartDone> create(
      Request request, NodeSettings settings, LookupActor.ClusterChanges changes) {
    return Behaviors.setup(
        ctx -> {
          LookupQuery q = new LookupQuery(ctx, request, settings, changes);
          List<Part> parts = q.split();
          q.parts = parts.size();
          parts.forEach(q::ask);
          return q.waiting();
        });
  }

  private Behavior<PartDone> waiting() {
    return Behaviors.receive(PartDone.class).onMessage(PartDone.class, this::onPartDone).build();
  }

  /** Groups the missing positions by range, in parts whose reply fits one remote message. */
  private List<Part> split() {
    CacheSpec spec = request.spec();
    int perPart = Math.max(1, settings.maxReplyBytes() / LookupChecks.rowBytes(spec));
    Map<Integer, List<Integer>> byRange = new LinkedHashMap<>();
    for (int m : request.missing()) {
      byRange.computeIfAbsent(spec.rangeOf(request.indices()[m]), r -> new ArrayList<>()).add(m);
    }
    List<Part> parts = new ArrayList<>();
    byRange.forEach(
        (range, positions) -> {
          for (int from = 0; from < positions.size(); from += perPart) {
            int[] p =
                positions.subList(from, Math.min(positions.size(), from + perPart)).stream()
                    .mapToInt(Integer::intValue)
                    .toArray();
            long[] wanted = new long[p.length];
            for (int i = 0; i < p.length; i++) {
              wanted[i] = request.indices()[p[i]];
            }
            parts.add(new Part(range, p, wanted, 0));
          }
        });
    return parts;
  }

  /**
   * Asks the part's shard, waiting {@code retry-after} for the first attempt, twice and then three
   * times as long for the next ones (a long computation is not asked for too often, and a lost
   * request costs little), never past the request's deadline.
   */
  private void ask(Part part) {
    Duration wait = settings.lookupRetryAfter().multipliedBy(Math.min(part.attempt(), 2) + 1);
    Duration left = Duration.ofNanos(Math.max(1_000_000, deadline() - System.nanoTime()));
    String entity = RangeId.of(request.cacheId(), part.range()).toString();
    ctx.askWithStatus(
        ShardActor.Computed.class,
        sharding.entityRefFor(ShardActor.ENTITY_KEY, entity),
        wait.compareTo(left) < 0 ? wait : left,
        replyTo -> new ShardActor.Compute(part.indices(), replyTo),
        (computed, failure) -> new PartDone(part, computed, failure));
  }

  /**
   * When the request fails: the lookup timeout after its start or after the cluster last changed
   * (now, while a member is unreachable), and never later than {@code max-wait} after its start.
   */
  private long deadline() {
    long from = Math.max(start, changes.lastChange());
    return Math.min(
        start + settings.lookupMaxWait().toNanos(), from + settings.lookupTimeout().toNanos());
  }

  private Behavior<PartDone> onPartDone(PartDone done) {
    if (done.failure() instanceof TimeoutException && System.nanoTime() < deadline()) {
      ask(done.part().next());
      return Behaviors.same();
    }
    if (done.failure() != null) {
      String reason =
          String.format(
              "lookup of %d indices of cache '%s' failed: %s",
              request.indices().length, request.cacheId(), describe(done.failure()));
      // a timeout is answered as a type of its own, which the asking node counts as one
      request
          .replyTo()
          .tell(
              done.failure() instanceof TimeoutException
                  ? StatusReply.error(new LookupTimeoutException(reason))
                  : StatusReply.error(reason));
      return Behaviors.stopped();
    }
    scatter(request.spec(), done.computed().values(), done.part().positions(), request.values());
    if (--parts > 0) {
      return Behaviors.same();
    }
    request
        .replyTo()
        .tell(StatusReply.success(new LookupActor.Values(request.indices(), request.values())));
    return Behaviors.stopped();
  }

  /**
   * Writes row {@code i} of {@code rows} (per field, dense rows of its width) to row {@code
   * positions[i]} of {@code into}: how the answers of shards take their place in a request.
   */
  static void scatter(CacheSpec spec, Object[] rows, int[] positions, Object[] into) {
    for (int f = 0; f < into.length; f++) {
      int width = spec.fields().get(f).width();
      for (int i = 0; i < positions.length; i++) {
        System.arraycopy(rows[f], i * width, into[f], positions[i] * width, width);
      }
    }
  }

  private String describe(Throwable failure) {
    if (!(failure instanceof TimeoutException)) {
      return failure.getMessage();
    }
    long waited = (System.nanoTime() - start) / 1_000_000;
    String timeout = "not computed within " + settings.lookupTimeout().toMillis() + " ms";
    return waited < settings.lookupTimeout().toMillis() + 1_000
        ? timeout
        : String.format(
            "%s of a stable cluster (members changed while it waited %d ms)", timeout, waited);
  }
}
