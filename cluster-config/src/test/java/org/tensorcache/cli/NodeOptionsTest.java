package org.tensorcache.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

class NodeOptionsTest {
  @TempDir Path dir;

  @Test
  void badRolesSeedsAndPortsAreOneLineNamingTheValueAndNothingIsMade() {
    assertError(
        "unknown role 'gpu' in --roles, expected compute, lookup or trainer",
        "node",
        "--roles",
        "compute,gpu");
    assertError(
        "seed '127.0.0.1' is not host:port, expected e.g. 127.0.0.1:25520",
        "node",
        "--seeds",
        "127.0.0.1");
    assertError(
        "seed 'b:x' has no numeric port, expected e.g. 127.0.0.1:25520",
        "node",
        "--seeds",
        "a:1,b:x");
    assertError("seed 'a:0': port 0: expected 1..65535", "node", "--seeds", "a:0");
    assertError("--port 70000: expected 1..65535", "node", "--port", "70000");
    assertError(
        "--lookup-port -2: expected 1..65535 or 0 (any free port)", "node", "--lookup-port", "-2");
    assertError("--tls-dir needs --profile tls", "node", "--tls-dir", "certs");
    assertError(
        "--management-port 65536: expected 1..65535 or 0 (any free port)",
        "node",
        "--management-port",
        "65536");
    assertError(
        "--metrics-port -1: expected 1..65535 or 0 (any free port)",
        "node",
        "--metrics-port",
        "-1");
    assertFalse(Files.exists(dir.resolve("data")), "nothing may be made for a bad option");
  }

  @Test
  void badDnsSeedsAreOneLineNamingTheValueAndNothingIsMade() {
    assertError(
        "seed 'dns:' has an empty name, expected dns:NAME[:PORT], e.g."
            + " dns:tensorcache.default.svc.cluster.local",
        "node",
        "--seeds",
        "dns:");
    assertError(
        "seed 'dns:tc:x' has no numeric port, expected dns:NAME[:PORT], e.g."
            + " dns:tensorcache.default.svc.cluster.local:25520",
        "node",
        "--seeds",
        "dns:tc:x");
    assertError(
        "--seeds 'dns:tc,127.0.0.1:25520' mixes dns: with other entries, expected one"
            + " dns:NAME[:PORT] alone or host:port,... entries",
        "node",
        "--seeds",
        "dns:tc,127.0.0.1:25520");
    assertError(
        "--host 'node-0' with --seeds dns:tc:25521: expected this node's IP address as the"
            + " records of tc give it, e.g. 10.0.0.5 (on Kubernetes the pod IP, status.podIP)",
        "node",
        "--seeds",
        "dns:tc",
        "--port",
        "25521",
        "--host",
        "node-0");
    assertError(
        "--dns-server needs --seeds dns:NAME[:PORT]",
        "node",
        "--seeds",
        "127.0.0.1:25520",
        "--dns-server",
        "127.0.0.1:53");
    assertError(
        "--dns-server '127.0.0.1' is not host:port, expected e.g. 127.0.0.1:25520",
        "node",
        "--seeds",
        "dns:tc",
        "--dns-server",
        "127.0.0.1");
    assertFalse(Files.exists(dir.resolve("data")), "nothing may be made for a bad option");
  }

  @Test
  void dnsSeedsTakeTheNodesPortAndTheDnsServerBecomesASetting() {
    ClusterOptions options = new ClusterOptions();
    new CommandLine(options)
        .parseArgs("--seeds", "dns:tc.default.svc", "--dns-server", "10.96.0.10:53");
    assertEquals("dns:tc.default.svc:25521", options.dns(25521).orElseThrow().toString());
    assertEquals(Map.of("tensorcache.discovery.dns-server", "10.96.0.10:53"), options.overrides());
    ClusterOptions fixed = new ClusterOptions();
    new CommandLine(fixed).parseArgs("--seeds", "10.0.0.5:25520");
    assertTrue(fixed.dns(25521).isEmpty());
  }

  @Test
  void profilesPutTheTransportFirstSoItWinsOverCluster() {
    ClusterOptions options = new ClusterOptions();
    new CommandLine(options).parseArgs("--profile", "aeron", "--journal", "postgres");
    assertEquals(List.of("aeron", "cluster", "postgres"), options.profiles());
    ClusterOptions defaults = new ClusterOptions();
    new CommandLine(defaults).parseArgs();
    assertEquals(List.of("cluster", "h2"), defaults.profiles());
    ClusterOptions tls = new ClusterOptions();
    new CommandLine(tls).parseArgs("--profile", "tls", "--tls-dir", "certs");
    assertEquals(List.of("tls", "cluster", "h2"), tls.profiles());
    assertEquals(
        Map.of("tensorcache.security.tls.dir", Path.of("certs").toAbsolutePath().toString()),
        tls.overrides());
  }

  private void assertError(String expected, String... args) {
    StringWriter err = new StringWriter();
    CommandLine cli = Main.commandLine().setErr(new PrintWriter(err));
    String[] withData = new String[args.length + 2];
    System.arraycopy(args, 0, withData, 0, args.length);
    withData[args.length] = "--data-dir";
    withData[args.length + 1] = dir.resolve("data").toString();
    assertEquals(1, cli.execute(withData), err::toString);
    assertEquals("tensorcache node: " + expected + "\n", err.toString());
  }
}
