package org.tensorcache.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.client.RemoteLookupClient;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.coordinator.CacheStatus;

/**
 * A node's Prometheus endpoint, scraped before, during and after a fill: the names follow the
 * conventions, and the counters move with what the node does (examples computed and persisted,
 * ranges, segment writes, lookups on both paths, their failures, the lookup port's connections).
 */
class MetricsEndpointTest {
  private static final Pattern SAMPLE =
      Pattern.compile("^([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{[^}]*\\})? (\\S+)$", Pattern.MULTILINE);
  private static final Pattern TYPE = Pattern.compile("^# TYPE (\\S+) (\\S+)$", Pattern.MULTILINE);

  @TempDir Path dir;
  private OpsNode ops;

  @Test
  void countersMoveDuringAFillAndTheNamesFollowTheConventions() throws Exception {
    SmallCache cache = new SmallCache(dir.resolve("cache"), 1024, 64);
    ops = new OpsNode(dir.resolve("node"), cache.slowDefinition(40), Map.of());
    String id = cache.fingerprint.cacheId();
    String c = "{cache=\"" + id + "\"}";

    // the coverage gauges appear once the coordinator has answered the node
    Map<String, Double> before = awaitScrape("tensorcache_examples" + c, 1024);
    assertEquals(0, before.get("tensorcache_examples_computed_total" + c));
    assertEquals(0, before.get("tensorcache_examples_present" + c));
    assertEquals(1, before.get("tensorcache_members{status=\"up\"}"));
    assertTrue(before.containsKey("jvm_memory_used_bytes{area=\"heap\"}"), "JVM metrics");

    var fill = ops.fill(id);
    boolean sawPartial = false;
    while (!fill.isDone()) {
      Map<String, Double> during = scrape();
      double computed = during.get("tensorcache_examples_computed_total" + c);
      sawPartial |= computed > 0 && computed < 1024;
      Thread.sleep(100);
    }
    CacheStatus done = fill.get();
    assertEquals(16, done.persistedRanges());
    assertTrue(sawPartial, "a scrape during the fill saw part of the examples computed");

    TensorCacheClient client = TensorCacheClient.create(ops.node.system());
    for (int i = 0; i < 5; i++) {
      client.lookup(id, new long[] {i, 1000 - i});
    }
    assertThrows(IllegalArgumentException.class, () -> client.lookup(id, new long[] {1024}));
    try (RemoteLookupClient remote =
        RemoteLookupClient.connect(
            List.of(
                new java.net.InetSocketAddress(
                    "127.0.0.1",
                    org.tensorcache.actors.cache.TensorCacheNode.get(ops.node.system())
                        .endpointAddress()
                        .orElseThrow()
                        .getPort())),
            Duration.ofSeconds(30))) {
      remote.lookup(id, new long[] {3, 4, 5});
      remote.lookup(id, new long[] {6});
      assertThrows(IllegalArgumentException.class, () -> remote.lookup(id, new long[] {1024}));
    }

    Map<String, Double> after =
        awaitScrape("tensorcache_ranges{cache=\"" + id + "\",state=\"persisted\"}", 16);
    assertEquals(1024, after.get("tensorcache_examples_computed_total" + c));
    assertEquals(1024, after.get("tensorcache_examples_persisted_total" + c));
    assertEquals(16, after.get("tensorcache_ranges_completed_total" + c));
    assertEquals(16, after.get("tensorcache_ranges_persisted_total" + c));
    assertEquals(0, after.get("tensorcache_segments_rejected_total" + c));
    assertEquals(1024, after.get("tensorcache_examples_present" + c));
    assertEquals(0, after.get("tensorcache_replication_lag_seconds" + c));
    assertEquals(16, after.get("tensorcache_segment_write_seconds_count"));
    assertTrue(after.get("tensorcache_segment_write_seconds_sum") > 0);
    assertEquals(6, after.get("tensorcache_lookups_total{path=\"member\"}"));
    assertEquals(5, after.get("tensorcache_lookup_seconds_count{path=\"member\"}"));
    assertEquals(5, after.get("tensorcache_lookup_seconds_bucket{path=\"member\",le=\"+Inf\"}"));
    assertEquals(
        1, after.get("tensorcache_lookup_failures_total{path=\"member\",reason=\"bad_request\"}"));
    assertEquals(3, after.get("tensorcache_lookups_total{path=\"port\"}"));
    assertEquals(2, after.get("tensorcache_lookup_seconds_count{path=\"port\"}"));
    assertEquals(
        1, after.get("tensorcache_lookup_failures_total{path=\"port\",reason=\"bad_request\"}"));
    assertTrue(after.get("tensorcache_port_accepted_total") >= 1);
    assertEquals(0, after.get("tensorcache_port_refused_total"));
    assertEquals(0, after.get("tensorcache_port_connections"), "the client closed them");
    assertEquals(0, after.get("tensorcache_port_requests_in_flight"), "every request answered");
  }

  @Test
  void everyFamilyIsNamedByTheConventions() throws Exception {
    SmallCache cache = new SmallCache(dir.resolve("cache"), 128, 64);
    // replicated by reference: the memory tier's figures too
    ops =
        new OpsNode(
            dir.resolve("node"),
            cache.definition(),
            Map.of("tensorcache.replication.gossip-budget", "256 B"));
    awaitScrape("tensorcache_examples{cache=\"" + cache.fingerprint.cacheId() + "\"}", 128);
    HttpResponse<String> r = ops.get(ops.metrics, "/metrics");
    assertEquals(200, r.statusCode());
    Map<String, String> types = new HashMap<>();
    Matcher m = TYPE.matcher(r.body());
    while (m.find()) {
      types.put(m.group(1), m.group(2));
    }
    Set<String> ours = new TreeSet<>();
    types.forEach(
        (name, type) -> {
          if (!name.startsWith("tensorcache_")) {
            return;
          }
          ours.add(name);
          assertTrue(name.matches("[a-z][a-z0-9_]*"), name);
          assertEquals(type.equals("counter"), name.endsWith("_total"), name + " " + type);
          if (type.equals("histogram")) {
            assertTrue(name.endsWith("_seconds"), name);
          }
        });
    for (String expected :
        List.of(
            "tensorcache_examples_computed_total",
            "tensorcache_examples_persisted_total",
            "tensorcache_ranges",
            "tensorcache_ranges_completed_total",
            "tensorcache_ranges_persisted_total",
            "tensorcache_segments_rejected_total",
            "tensorcache_fill_examples_per_second",
            "tensorcache_fill_eta_seconds",
            "tensorcache_lookups_total",
            "tensorcache_lookup_seconds",
            "tensorcache_lookup_failures_total",
            "tensorcache_segment_write_seconds",
            "tensorcache_segment_read_seconds",
            "tensorcache_replication_lag_seconds",
            "tensorcache_port_connections",
            "tensorcache_port_requests_in_flight",
            "tensorcache_port_accepted_total",
            "tensorcache_port_refused_total",
            "tensorcache_members",
            "tensorcache_members_unreachable",
            "tensorcache_hot_tier_budget_bytes",
            "tensorcache_hot_tier_held_bytes",
            "tensorcache_tier_hits_total",
            "tensorcache_tier_admissions_total",
            "tensorcache_tier_evictions_total",
            "tensorcache_tier_held_bytes",
            "tensorcache_status_age_seconds")) {
      assertTrue(ours.contains(expected), expected + " in " + ours);
    }
    assertTrue(types.containsKey("jvm_threads_current"), "JVM metrics");
    // tensorcache_port_rejected_total{reason} has a series once a client was turned away
  }

  private Map<String, Double> scrape() throws Exception {
    HttpResponse<String> r = ops.get(ops.metrics, "/metrics");
    assertEquals(200, r.statusCode(), r::body);
    Map<String, Double> samples = new HashMap<>();
    Matcher m = SAMPLE.matcher(r.body());
    while (m.find()) {
      String key = m.group(1) + (m.group(2) == null ? "" : m.group(2));
      samples.put(key, Double.parseDouble(m.group(3).replace("+Inf", "Infinity")));
    }
    return samples;
  }

  /** A scrape once {@code key} is {@code value} (the coverage gauges follow the coordinator). */
  private Map<String, Double> awaitScrape(String key, double value) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
    Map<String, Double> s = scrape();
    while (!Double.valueOf(value).equals(s.get(key)) && System.nanoTime() < deadline) {
      Thread.sleep(100);
      s = scrape();
    }
    assertEquals(value, s.get(key), key);
    return s;
  }

  @AfterEach
  void stop() {
    if (ops != null) {
      ops.close();
    }
  }
}
