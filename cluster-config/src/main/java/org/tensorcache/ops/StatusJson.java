package org.tensorcache.ops;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.TreeSet;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.typed.Cluster;
import org.tensorcache.actors.cache.LatencyHistogram;
import org.tensorcache.actors.cache.NodeMetrics;
import org.tensorcache.actors.cache.TensorCacheNode;

/**
 * The status page's data ({@code /status.json}): this node, the members with their roles, per cache
 * the coverage the coordinator last reported with one state per range, the fill rate and time to
 * completion, and this node's lookups with their latency quantiles. Times in seconds; a figure with
 * nothing to measure is null.
 */
final class StatusJson {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final ActorSystem<?> system;
  private final ClusterView view;

  StatusJson(ActorSystem<?> system, ClusterView view) {
    this.system = system;
    this.view = view;
  }

  /** The status now. */
  ObjectNode build() {
    Cluster cluster = Cluster.get(system);
    ObjectNode out = JSON.createObjectNode();
    out.put("node", cluster.selfMember().address().toString());
    out.set("roles", roles(cluster.selfMember()));
    out.put("time", System.currentTimeMillis());
    ClusterView.Snapshot snap = view.snapshot();
    number(out, "statusAgeSeconds", snap.ageSeconds());
    ArrayNode members = out.putArray("members");
    var unreachable = cluster.state().getUnreachable();
    for (Member m : cluster.state().getMembers()) {
      ObjectNode n = members.addObject();
      n.put("address", m.address().toString());
      n.put("status", m.status().toString());
      n.set("roles", roles(m));
      n.put("reachable", !unreachable.contains(m));
    }
    ArrayNode caches = out.putArray("caches");
    for (ClusterView.CacheView c : snap.caches()) {
      caches.add(cache(c));
    }
    out.set("lookups", lookups(TensorCacheNode.get(system).metrics()));
    return out;
  }

  private ObjectNode cache(ClusterView.CacheView c) {
    var s = c.status();
    ObjectNode n = JSON.createObjectNode();
    n.put("id", s.cacheId());
    n.put("examples", s.examples());
    n.put("present", s.present());
    n.put("ranges", s.ranges());
    ObjectNode byState = n.putObject("rangesByState");
    for (byte st = 0; st < ClusterCollectors.STATES.length; st++) {
      byState.put(ClusterCollectors.STATES[st], s.rangesIn(st));
    }
    n.put("filling", s.filling());
    n.put("restored", s.restored());
    number(n, "examplesPerSecond", c.examplesPerSecond());
    number(n, "etaSeconds", c.etaSeconds());
    n.put("replicationLagSeconds", s.unpersistedMillis() / 1000.0);
    // one digit per range: its state's index in ClusterCollectors.STATES
    StringBuilder states = new StringBuilder(s.rangeStates().length);
    for (byte st : s.rangeStates()) {
      states.append((char) ('0' + st));
    }
    n.put("states", states.toString());
    return n;
  }

  private static ObjectNode lookups(NodeMetrics m) {
    ObjectNode out = JSON.createObjectNode();
    for (NodeMetrics.LookupPath p : NodeMetrics.LookupPath.values()) {
      LatencyHistogram.Snapshot latency = m.lookupLatency(p);
      ObjectNode n = out.putObject(p.label());
      n.put("count", m.lookups(p));
      long failed = 0;
      for (NodeMetrics.FailureReason r : NodeMetrics.FailureReason.values()) {
        failed += m.lookupFailures(p, r);
      }
      n.put("failed", failed);
      number(n, "p50Seconds", latency.quantile(0.5));
      number(n, "p99Seconds", latency.quantile(0.99));
    }
    return out;
  }

  private static ArrayNode roles(Member m) {
    ArrayNode roles = JSON.createArrayNode();
    for (String r : new TreeSet<>(m.getRoles())) {
      if (!r.startsWith("dc-")) { // the data-center role every member has
        roles.add(r);
      }
    }
    return roles;
  }

  /** A finite number, or null. */
  private static void number(ObjectNode n, String field, double value) {
    if (Double.isFinite(value)) {
      n.put(field, value);
    } else {
      n.putNull(field);
    }
  }

  /** The JSON text of {@code node}. */
  static String text(ObjectNode node) {
    try {
      return JSON.writeValueAsString(node);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("status not written as JSON", e);
    }
  }
}
