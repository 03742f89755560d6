package org.tensorcache.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.testing.Dnsmasq;

/**
 * Three {@code ./tensorcache node} processes on 127.0.0.1, .2 and .3 with no seed list, only {@code
 * --seeds dns:NAME} answered by a real DNS server (dnsmasq): the node at .3 starts before NAME has
 * any record and waits; once the records are there, the three form one cluster, formed by the
 * lowest address. A {@code status} finds them through the name too. The lowest, stopped and started
 * again, joins the cluster that exists rather than forming another. Without dnsmasq the test skips
 * itself, except under {@code CI=true}, where it fails.
 */
class DnsSeedsProcessTest {
  private static final String NAME = "nodes.tensorcache.test";
  private static final Pattern UP = Pattern.compile("node up: (\\S+) .*management=\\S+:(\\d+)");
  private static final String FORMING = "forming new cluster"; // Pekko's line for a self-join
  // the nodes wait for each other as long as a loaded machine needs, never giving up
  private static final String JAVA_OPTS =
      "-Xmx384m -Dpekko.cluster.shutdown-after-unsuccessful-join-seed-nodes=off";
  private static final Duration WITHIN = Duration.ofSeconds(180);

  @TempDir Path dir;
  private NodeProcesses processes;
  private Dnsmasq dns;
  private int port;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final ObjectMapper json = new ObjectMapper();

  /** A node process, its cluster address and its management port. */
  private record Node(NodeProcesses.Started started, String address, int management) {}

  @Test
  void nodesFindEachOtherByNameAndOnlyTheLowestFormsTheCluster() throws Exception {
    dns = Dnsmasq.start(dir.resolve("dns"), "tensorcache.test");
    processes = new NodeProcesses(dir);
    port = freePortOnAll("127.0.0.1", "127.0.0.2", "127.0.0.3");

    NodeProcesses.Started early = start("n3", "127.0.0.3"); // makes the data set and model alone
    NodeProcesses.await(
        early,
        Pattern.compile(Pattern.quote("dns:" + NAME + ":" + port + " resolves to no address yet")),
        WITHIN);
    dns.records(NAME, List.of("127.0.0.2", "127.0.0.3", "127.0.0.1"));
    // not the lowest: it asks the others and waits for a cluster; the nodes start one at a time,
    // as two that open their shared H2 journal file at the same moment can lock each other out
    NodeProcesses.Started second = start("n2", "127.0.0.2");
    NodeProcesses.await(
        second,
        Pattern.compile(
            Pattern.quote("dns:" + NAME + ":" + port + ": joining the cluster through")),
        WITHIN);
    Node n1 = up(start("n1", "127.0.0.1"));
    Node n2 = up(second);
    Node n3 = up(early);

    List<Node> nodes = List.of(n1, n2, n3);
    Set<String> all = addresses(nodes);
    for (Node n : nodes) {
      JsonNode view = awaitMembers(n, all);
      assertEquals(n1.address(), view.get("oldest").asText(), "the lowest formed it: " + view);
    }
    assertTrue(n1.started().text().contains(FORMING), n1.started().tail());
    for (Node n : List.of(n2, n3)) {
      assertFalse(n.started().text().contains(FORMING), n.started().tail());
    }

    NodeProcesses.Started status =
        processes.start(
            "status",
            List.of(
                "status",
                "--seeds",
                "dns:" + NAME + ":" + port,
                "--dns-server",
                dns.address(),
                "--timeout",
                "120",
                "--data-dir",
                dir.resolve("data").toString()),
            JAVA_OPTS);
    assertTrue(status.process().waitFor(WITHIN.toSeconds(), TimeUnit.SECONDS), "status ended");
    assertEquals(0, status.process().exitValue(), status.text());
    assertTrue(status.text().contains("members (3)"), status.text());
    for (String a : all) {
      assertTrue(status.text().contains(a), a + " in\n" + status.text());
    }

    // the lowest address comes back to a cluster that exists: it must join it, not form another
    n1.started().process().destroy();
    assertTrue(n1.started().process().waitFor(WITHIN.toSeconds(), TimeUnit.SECONDS));
    assertEquals(0, n1.started().process().exitValue(), n1.started().tail());
    awaitMembers(n2, addresses(List.of(n2, n3)));
    Node again = up(start("n1-again", "127.0.0.1"));
    assertEquals(n1.address(), again.address());
    for (Node n : List.of(again, n2, n3)) {
      JsonNode view = awaitMembers(n, all);
      String oldest = view.get("oldest").asText();
      assertTrue(oldest.equals(n2.address()) || oldest.equals(n3.address()), view.toString());
    }
    assertFalse(again.started().text().contains(FORMING), again.started().tail());
  }

  private NodeProcesses.Started start(String name, String host) throws IOException {
    List<String> args = new ArrayList<>();
    args.addAll(
        List.of(
            "node",
            "--host",
            host,
            "--port",
            Integer.toString(port),
            "--seeds",
            "dns:" + NAME,
            "--dns-server",
            dns.address(),
            "--management-port",
            "0",
            "--data-dir",
            dir.resolve("data").toString()));
    args.addAll(NodeProcesses.SMALL_JOB);
    return processes.start(name, args, JAVA_OPTS);
  }

  private static Node up(NodeProcesses.Started started) throws Exception {
    Matcher m = NodeProcesses.await(started, UP, WITHIN);
    return new Node(started, m.group(1), Integer.parseInt(m.group(2)));
  }

  private static Set<String> addresses(List<Node> nodes) {
    Set<String> out = new TreeSet<>();
    nodes.forEach(n -> out.add(n.address()));
    return out;
  }

  /**
   * Pekko Management's {@code /cluster/members} of {@code n} once it lists exactly {@code
   * expected}, all Up and reachable; fails with the last answer after {@link #WITHIN}.
   */
  private JsonNode awaitMembers(Node n, Set<String> expected) throws Exception {
    String host = URI.create(n.address().replace("pekko://", "http://")).getHost();
    HttpRequest request =
        HttpRequest.newBuilder(
                URI.create("http://" + host + ":" + n.management() + "/cluster/members"))
            .timeout(Duration.ofSeconds(5))
            .build();
    long deadline = System.nanoTime() + WITHIN.toNanos();
    JsonNode view = null;
    while (System.nanoTime() < deadline) {
      view = json.readTree(http.send(request, HttpResponse.BodyHandlers.ofString()).body());
      Set<String> up = new TreeSet<>();
      for (JsonNode m : view.get("members")) {
        if (m.get("status").asText().equals("Up")) {
          up.add(m.get("node").asText());
        }
      }
      if (up.equals(expected)
          && view.get("members").size() == expected.size()
          && view.get("unreachable").isEmpty()) {
        return view;
      }
      Thread.sleep(200);
    }
    throw new AssertionError(
        n.address()
            + " sees "
            + view
            + ", expected "
            + expected
            + " Up; log:\n"
            + n.started().tail());
  }

  /** A port that is free on each of {@code hosts} (loopback addresses). */
  private static int freePortOnAll(String... hosts) throws IOException {
    for (int i = 0; i < 50; i++) {
      int candidate;
      try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName(hosts[0]))) {
        candidate = s.getLocalPort();
      }
      boolean free = true;
      for (String h : hosts) {
        try (ServerSocket s = new ServerSocket(candidate, 1, InetAddress.getByName(h))) {
          // free here
        } catch (IOException e) {
          free = false;
        }
      }
      if (free) {
        return candidate;
      }
    }
    throw new IllegalStateException("no port free on all of " + List.of(hosts));
  }

  @AfterEach
  void stop() throws InterruptedException {
    if (processes != null) {
      processes.close();
    }
    if (dns != null) {
      dns.close();
    }
  }
}
