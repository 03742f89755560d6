package org.tensorcache.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.testing.Dnsmasq;

/** Resolving through a real DNS server (dnsmasq) and through the system's resolver. */
class DnsLookupTest {
  private static final String NAME = "nodes.tensorcache.test";

  @TempDir Path dir;

  @Test
  void aDnsServerIsAskedAgainEachTimeAndTheAddressesComeInOrder() throws Exception {
    try (Dnsmasq dns = Dnsmasq.start(dir, "tensorcache.test")) {
      DnsLookup lookup = DnsLookup.of(Optional.of(new HostPort("127.0.0.1", dns.port())));
      assertEquals(List.of(), lookup.resolve(NAME), "no records yet");

      dns.records(NAME, List.of("127.0.0.3", "127.0.0.10", "127.0.0.2"));
      assertEquals(ips("127.0.0.2", "127.0.0.3", "127.0.0.10"), lookup.resolve(NAME));
      assertEquals(List.of(), lookup.resolve("other.tensorcache.test"));

      dns.records(NAME, List.of("127.0.0.2"));
      assertEquals(ips("127.0.0.2"), lookup.resolve(NAME), "the new records, nothing kept");
      String log = dns.logText();
      assertTrue(log.contains("query[A] " + NAME), log);
    }
  }

  @Test
  void aServerThatDoesNotAnswerIsAnErrorNamingIt() throws Exception {
    int port;
    try (DatagramSocket s = new DatagramSocket(new InetSocketAddress("127.0.0.1", 0))) {
      port = s.getLocalPort(); // closed again: nothing answers there
    }
    DnsLookup lookup = DnsLookup.of(Optional.of(new HostPort("127.0.0.1", port)));
    IOException e = assertThrows(IOException.class, () -> lookup.resolve(NAME));
    assertTrue(
        e.getMessage().startsWith("DNS server 127.0.0.1:" + port + " did not resolve " + NAME),
        e.getMessage());
  }

  @Test
  void theSystemResolverAnswersToo() throws Exception {
    List<InetAddress> local = DnsLookup.of(Optional.empty()).resolve("localhost");
    assertFalse(local.isEmpty());
    assertTrue(local.stream().allMatch(InetAddress::isLoopbackAddress), local::toString);
    assertEquals(
        ips("127.0.0.7"), DnsLookup.of(Optional.empty()).resolve("127.0.0.7"), "a literal");
  }

  private static List<InetAddress> ips(String... literals) throws IOException {
    InetAddress[] out = new InetAddress[literals.length];
    for (int i = 0; i < literals.length; i++) {
      out[i] = InetAddress.getByName(literals[i]);
    }
    return List.of(out);
  }
}
