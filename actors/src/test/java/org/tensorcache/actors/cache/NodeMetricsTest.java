package org.tensorcache.actors.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The node's counters and latency histograms count what they are told, per cache and path. */
class NodeMetricsTest {
  @Test
  void histogramPutsEachValueInTheFirstBucketAtOrAboveIt() {
    LatencyHistogram h = new LatencyHistogram(new double[] {0.001, 0.01, 0.1});
    h.record(1_000_000); // exactly 1 ms: the 1 ms bucket (le)
    h.record(5_000_000);
    h.record(5_000_000);
    h.record(2_000_000_000L); // above every bound
    LatencyHistogram.Snapshot s = h.snapshot();
    assertEquals(4, s.counts().length);
    assertEquals(1, s.counts()[0]);
    assertEquals(2, s.counts()[1]);
    assertEquals(0, s.counts()[2]);
    assertEquals(1, s.counts()[3]);
    assertEquals(4, s.count());
    assertEquals(2.011, s.sumSeconds(), 1e-9);
  }

  @Test
  void quantilesInterpolateWithinTheirBucket() {
    LatencyHistogram h = new LatencyHistogram(new double[] {0.001, 0.002, 0.004});
    for (int i = 0; i < 50; i++) {
      h.record(500_000); // 0.5 ms: bucket (0, 1 ms]
    }
    for (int i = 0; i < 50; i++) {
      h.record(3_000_000); // 3 ms: bucket (2 ms, 4 ms]
    }
    LatencyHistogram.Snapshot s = h.snapshot();
    assertEquals(0.001, s.quantile(0.5), 1e-12); // rank 50: the top of the first bucket
    assertEquals(0.002 + 0.002 * 0.98, s.quantile(0.99), 1e-12);
    assertEquals(0.0, s.quantile(0), 1e-12);
    assertTrue(Double.isNaN(new LatencyHistogram(new double[] {1}).snapshot().quantile(0.5)));
    assertThrows(IllegalArgumentException.class, () -> s.quantile(1.5));
  }

  @Test
  void aQuantileInTheLastBucketIsTheHighestBound() {
    LatencyHistogram h = new LatencyHistogram(new double[] {0.001, 0.01});
    h.record(60_000_000_000L);
    assertEquals(0.01, h.snapshot().quantile(0.99), 1e-12);
  }

  @Test
  void boundsMustIncrease() {
    assertThrows(
        IllegalArgumentException.class, () -> new LatencyHistogram(new double[] {0.1, 0.1}));
  }

  @Test
  void countersArePerCacheAndPerPath() {
    NodeMetrics m = new NodeMetrics();
    m.examplesComputed("a", 64);
    m.examplesComputed("a", 36);
    m.rangeCompleted("a");
    m.rangePersisted("a", 100);
    m.segmentRejected("b");
    assertEquals(new NodeMetrics.CacheCounts(100, 100, 1, 1, 0), m.cacheCounts("a"));
    assertEquals(new NodeMetrics.CacheCounts(0, 0, 0, 0, 1), m.cacheCounts("b"));
    assertEquals(new NodeMetrics.CacheCounts(0, 0, 0, 0, 0), m.cacheCounts("unknown"));
    assertEquals(2, m.caches().size());

    long started = System.nanoTime();
    m.lookupServed(NodeMetrics.LookupPath.PORT, started);
    m.lookupFailed(NodeMetrics.LookupPath.PORT, NodeMetrics.FailureReason.TIMEOUT);
    m.lookupFailed(NodeMetrics.LookupPath.MEMBER, NodeMetrics.FailureReason.BAD_REQUEST);
    assertEquals(2, m.lookups(NodeMetrics.LookupPath.PORT));
    assertEquals(1, m.lookups(NodeMetrics.LookupPath.MEMBER));
    assertEquals(1, m.lookupLatency(NodeMetrics.LookupPath.PORT).count());
    assertEquals(0, m.lookupLatency(NodeMetrics.LookupPath.MEMBER).count());
    assertEquals(
        1, m.lookupFailures(NodeMetrics.LookupPath.PORT, NodeMetrics.FailureReason.TIMEOUT));
    assertEquals(
        0, m.lookupFailures(NodeMetrics.LookupPath.PORT, NodeMetrics.FailureReason.BAD_REQUEST));
    assertEquals("bad_request", NodeMetrics.FailureReason.BAD_REQUEST.label());
    assertEquals("member", NodeMetrics.LookupPath.MEMBER.label());
  }

  @Test
  void portConnectionsOpenAreTheAcceptedLessTheClosed() {
    NodeMetrics m = new NodeMetrics();
    m.portAccepted();
    m.portAccepted();
    m.portClosed();
    m.portRefused();
    m.portRejected("bad_token");
    m.portRejected("bad_token");
    m.portRejected("tls_handshake");
    assertEquals(1, m.portOpen());
    assertEquals(2, m.portAcceptedTotal());
    assertEquals(1, m.portRefusedTotal());
    assertEquals(Map.of("bad_token", 2L, "tls_handshake", 1L), m.portRejected());
  }
}
