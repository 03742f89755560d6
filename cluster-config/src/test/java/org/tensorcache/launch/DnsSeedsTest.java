package org.tensorcache.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.InetAddress;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class DnsSeedsTest {
  @Test
  void aDnsNameWithOrWithoutAPortAndNothingElse() {
    assertEquals(Optional.empty(), DnsSeeds.parse(null));
    assertEquals(Optional.empty(), DnsSeeds.parse(" "));
    assertEquals(Optional.empty(), DnsSeeds.parse("10.0.0.5:25520,10.0.0.6:25520"));
    assertEquals(
        Optional.of(new DnsSeeds("tc.default.svc.cluster.local", 0)),
        DnsSeeds.parse("dns:tc.default.svc.cluster.local"));
    assertEquals(
        Optional.of(new DnsSeeds("tc-nodes", 2552)), DnsSeeds.parse(" DNS:tc-nodes:2552 "));
    assertEquals(Optional.of(new DnsSeeds("_x.tc.", 1)), DnsSeeds.parse("dns:_x.tc.:1"));
  }

  @Test
  void theNodesOwnPortIsTheDefault() {
    assertEquals(new DnsSeeds("tc", 25521), DnsSeeds.parse("dns:tc").get().withDefaultPort(25521));
    assertEquals(new DnsSeeds("tc", 7), DnsSeeds.parse("dns:tc:7").get().withDefaultPort(25521));
    assertEquals("dns:tc:7", new DnsSeeds("tc", 7).toString());
    assertEquals("dns:tc", new DnsSeeds("tc", 0).toString());
  }

  @Test
  void badValuesAreNamedWithWhatWasExpected() {
    assertError(
        "seed 'dns:' has an empty name, expected dns:NAME[:PORT], e.g."
            + " dns:tensorcache.default.svc.cluster.local",
        "dns:");
    assertError(
        "seed 'dns::25520' has an empty name, expected dns:NAME[:PORT], e.g."
            + " dns:tensorcache.default.svc.cluster.local",
        "dns::25520");
    assertError(
        "seed 'dns:tc:http' has no numeric port, expected dns:NAME[:PORT], e.g."
            + " dns:tensorcache.default.svc.cluster.local:25520",
        "dns:tc:http");
    assertError(
        "seed 'dns:tc:' has no numeric port, expected dns:NAME[:PORT], e.g."
            + " dns:tensorcache.default.svc.cluster.local:25520",
        "dns:tc:");
    assertError("seed 'dns:tc:70000': port 70000: expected 1..65535", "dns:tc:70000");
    assertError(
        "seed 'dns:tc nodes': 'tc nodes' is no DNS name, expected letters, digits, '-' and '_' in"
            + " labels separated by '.', e.g. dns:tensorcache.default.svc.cluster.local",
        "dns:tc nodes");
    assertError(
        "seed 'dns:a..b': 'a..b' is no DNS name, expected letters, digits, '-' and '_' in"
            + " labels separated by '.', e.g. dns:tensorcache.default.svc.cluster.local",
        "dns:a..b");
    assertError(
        "--seeds 'dns:tc,10.0.0.5:25520' mixes dns: with other entries, expected one"
            + " dns:NAME[:PORT] alone or host:port,... entries",
        "dns:tc,10.0.0.5:25520");
    assertError(
        "--seeds '10.0.0.5:25520,dns:tc' mixes dns: with other entries, expected one"
            + " dns:NAME[:PORT] alone or host:port,... entries",
        "10.0.0.5:25520,dns:tc");
    assertError(
        "--seeds 'dns:a,dns:b' mixes dns: with other entries, expected one dns:NAME[:PORT]"
            + " alone or host:port,... entries",
        "dns:a,dns:b");
  }

  @Test
  void aNodesHostIsItsAddressOnlyWhenWrittenAsTheRecordsGiveIt() throws Exception {
    assertEquals(Optional.of(InetAddress.getByName("10.0.0.5")), DnsSeeds.ipAddress("10.0.0.5"));
    assertEquals(
        Optional.of(InetAddress.getByName("fd00::5")), DnsSeeds.ipAddress("fd00:0:0:0:0:0:0:5"));
    assertEquals(Optional.empty(), DnsSeeds.ipAddress("localhost"));
    assertEquals(Optional.empty(), DnsSeeds.ipAddress("300.1.1.1"));
    assertEquals(Optional.empty(), DnsSeeds.ipAddress("10.0.0.05"));
    assertEquals(Optional.empty(), DnsSeeds.ipAddress("fd00::5"));
    DnsSeeds seeds = new DnsSeeds("tc", 25520);
    assertEquals(InetAddress.getByName("10.0.0.5"), seeds.requireIpAddress("10.0.0.5"));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> seeds.requireIpAddress("node-0"));
    assertEquals(
        "--host 'node-0' with --seeds dns:tc:25520: expected this node's IP address as the"
            + " records of tc give it, e.g. 10.0.0.5 (on Kubernetes the pod IP, status.podIP)",
        e.getMessage());
  }

  private static void assertError(String expected, String seeds) {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> DnsSeeds.parse(seeds));
    assertEquals(expected, e.getMessage());
  }
}
