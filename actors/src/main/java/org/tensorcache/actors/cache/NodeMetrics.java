package org.tensorcache.actors.cache;

import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.LongAdder;

/**
 * What this node has done, counted as it happens by the actors and the lookup paths: examples
 * computed and persisted per cache, ranges completed, persisted and rejected, lookups per path with
 * their latency and failures per reason, segment write and read latency, and the lookup port's
 * connections. Plain counters ({@link LongAdder}) and {@link LatencyHistogram}s: recording never
 * blocks or allocates on the lookup path; exporters read them when asked.
 */
public final class NodeMetrics {
  /** Where a lookup came in. */
  public enum LookupPath {
    /** A member's client ({@code TensorCacheClient}, its sessions included). */
    MEMBER,
    /** The binary lookup port: GET, and NEXT of a session. */
    PORT;

    /** The label value: the name in lower case. */
    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** Why a lookup failed. */
  public enum FailureReason {
    /** Bad input: an unknown cache, an index out of range, a batch too large. */
    BAD_REQUEST,
    /** Values not computed within the lookup timeout. */
    TIMEOUT,
    /** Any other failure: a compute failure, a node going away. */
    FAILED;

    /**
     * Why a lookup failed: bad input ({@link IllegalArgumentException}), the lookup timeout (a
     * {@link TimeoutException} on the way, such as the lookup actor's), or anything else.
     */
    public static FailureReason of(Throwable failure) {
      for (Throwable t = failure; t != null; t = t.getCause()) {
        if (t instanceof IllegalArgumentException) {
          return BAD_REQUEST;
        }
        if (t instanceof TimeoutException) {
          return TIMEOUT;
        }
        if (t.getCause() == t) {
          break;
        }
      }
      return FAILED;
    }

    /** The label value: the name in lower case. */
    public String label() {
      return name().toLowerCase(Locale.ROOT);
    }
  }

  /** One cache's counters on this node at one moment. */
  public record CacheCounts(
      long examplesComputed,
      long examplesPersisted,
      long rangesCompleted,
      long rangesPersisted,
      long segmentsRejected) {}

  private static final class PerCache {
    final LongAdder computed = new LongAdder();
    final LongAdder persisted = new LongAdder();
    final LongAdder completed = new LongAdder();
    final LongAdder rangesPersisted = new LongAdder();
    final LongAdder rejected = new LongAdder();
  }

  private final ConcurrentHashMap<String, PerCache> caches = new ConcurrentHashMap<>();
  private final Map<LookupPath, LatencyHistogram> lookupLatency = new EnumMap<>(LookupPath.class);
  private final Map<LookupPath, Map<FailureReason, LongAdder>> failures =
      new EnumMap<>(LookupPath.class);
  private final LatencyHistogram segmentWrites = new LatencyHistogram(LatencyHistogram.IO_BOUNDS);
  private final LatencyHistogram segmentReads = new LatencyHistogram(LatencyHistogram.IO_BOUNDS);
  private final LongAdder portAccepted = new LongAdder();
  private final LongAdder portClosed = new LongAdder();
  private final LongAdder portRequestsStarted = new LongAdder();
  private final LongAdder portRequestsEnded = new LongAdder();
  private final LongAdder portRefused = new LongAdder();
  private final ConcurrentHashMap<String, LongAdder> portRejected = new ConcurrentHashMap<>();

  /** Every counter at zero. */
  public NodeMetrics() {
    for (LookupPath p : LookupPath.values()) {
      lookupLatency.put(p, new LatencyHistogram(LatencyHistogram.LOOKUP_BOUNDS));
      Map<FailureReason, LongAdder> byReason = new EnumMap<>(FailureReason.class);
      for (FailureReason r : FailureReason.values()) {
        byReason.put(r, new LongAdder());
      }
      failures.put(p, byReason);
    }
  }

  private PerCache cache(String cacheId) {
    return caches.computeIfAbsent(cacheId, id -> new PerCache());
  }

  /** This node's runners computed {@code examples} examples of {@code cacheId}. */
  public void examplesComputed(String cacheId, long examples) {
    cache(cacheId).computed.add(examples);
  }

  /** A range of {@code cacheId} became complete in a shard on this node. */
  public void rangeCompleted(String cacheId) {
    cache(cacheId).completed.increment();
  }

  /** This node wrote the durable segment of a range of {@code examples} examples. */
  public void rangePersisted(String cacheId, long examples) {
    PerCache c = cache(cacheId);
    c.rangesPersisted.increment();
    c.persisted.add(examples);
  }

  /** A segment of {@code cacheId} read on this node failed its checks; its range is recomputed. */
  public void segmentRejected(String cacheId) {
    cache(cacheId).rejected.increment();
  }

  /** A lookup that came in on {@code path} at {@code startedNanos} was answered with its values. */
  public void lookupServed(LookupPath path, long startedNanos) {
    lookupLatency.get(path).recordSince(startedNanos);
  }

  /** A lookup that came in on {@code path} failed for {@code reason}. */
  public void lookupFailed(LookupPath path, FailureReason reason) {
    failures.get(path).get(reason).increment();
  }

  /** A segment write took {@code nanos}. */
  public void segmentWritten(long nanos) {
    segmentWrites.record(nanos);
  }

  /** A segment read (with its checks) took {@code nanos}. */
  public void segmentRead(long nanos) {
    segmentReads.record(nanos);
  }

  /** The lookup port accepted a connection. */
  public void portAccepted() {
    portAccepted.increment();
  }

  /** A connection the lookup port accepted ended. */
  public void portClosed() {
    portClosed.increment();
  }

  /** A connection of the lookup port read a whole request and starts answering it. */
  public void portRequestStarted() {
    portRequestsStarted.increment();
  }

  /** A request {@link #portRequestStarted} was answered, or its connection ended. */
  public void portRequestEnded() {
    portRequestsEnded.increment();
  }

  /** The lookup port refused a connection: it served as many as it may. */
  public void portRefused() {
    portRefused.increment();
  }

  /**
   * The lookup port turned a client away for {@code reason}, a short label such as {@code
   * tls_handshake} or {@code bad_token}.
   */
  public void portRejected(String reason) {
    portRejected.computeIfAbsent(reason, r -> new LongAdder()).increment();
  }

  /** The counters of every cache this node recorded something for, by cache id. */
  public SortedMap<String, CacheCounts> caches() {
    SortedMap<String, CacheCounts> out = new TreeMap<>();
    caches.forEach(
        (id, c) ->
            out.put(
                id,
                new CacheCounts(
                    c.computed.sum(),
                    c.persisted.sum(),
                    c.completed.sum(),
                    c.rangesPersisted.sum(),
                    c.rejected.sum())));
    return out;
  }

  /** The counters of {@code cacheId}, zero when nothing was recorded for it. */
  public CacheCounts cacheCounts(String cacheId) {
    return caches().getOrDefault(cacheId, new CacheCounts(0, 0, 0, 0, 0));
  }

  /** Lookups on {@code path}, answered or failed. */
  public long lookups(LookupPath path) {
    // the served ones are the latency histogram's: a served lookup costs no counter of its own
    long failed = 0;
    for (LongAdder reason : failures.get(path).values()) {
      failed += reason.sum();
    }
    return lookupLatency.get(path).snapshot().count() + failed;
  }

  /** The latency of the lookups on {@code path} answered with values. */
  public LatencyHistogram.Snapshot lookupLatency(LookupPath path) {
    return lookupLatency.get(path).snapshot();
  }

  /** Lookups on {@code path} that failed for {@code reason}. */
  public long lookupFailures(LookupPath path, FailureReason reason) {
    return failures.get(path).get(reason).sum();
  }

  /** The latency of segment writes (crash-safe: temporary file, fsync, rename). */
  public LatencyHistogram.Snapshot segmentWriteLatency() {
    return segmentWrites.snapshot();
  }

  /** The latency of segment reads with their checks. */
  public LatencyHistogram.Snapshot segmentReadLatency() {
    return segmentReads.snapshot();
  }

  /** Connections the lookup port accepted since the node started. */
  public long portAcceptedTotal() {
    return portAccepted.sum();
  }

  /** Connections the lookup port refused since the node started. */
  public long portRefusedTotal() {
    return portRefused.sum();
  }

  /** Connections of the lookup port open now. */
  public long portOpen() {
    return portAccepted.sum() - portClosed.sum();
  }

  /** Requests of the lookup port read whole and not answered yet. */
  public long portInFlight() {
    return portRequestsStarted.sum() - portRequestsEnded.sum();
  }

  /** Clients the lookup port turned away, by reason. */
  public SortedMap<String, Long> portRejected() {
    SortedMap<String, Long> out = new TreeMap<>();
    portRejected.forEach((reason, n) -> out.put(reason, n.sum()));
    return out;
  }
}
