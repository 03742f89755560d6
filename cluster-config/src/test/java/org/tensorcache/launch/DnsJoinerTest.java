package org.tensorcache.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.List;
import org.apache.pekko.actor.Address;
import org.junit.jupiter.api.Test;

/** Who may form the cluster, and whom a member asks: the lowest-address decision. */
class DnsJoinerTest {
  private static final int PORT = 25520;

  @Test
  void onlyTheLowestAddressPutsItselfFirstTheOthersOnlyJoin() throws Exception {
    List<InetAddress> three = ips("10.0.0.7", "10.0.0.5", "10.0.0.6");
    assertEquals(
        addresses("10.0.0.5", "10.0.0.6", "10.0.0.7"),
        DnsJoiner.seedNodes(self("10.0.0.5"), true, three, PORT, true, 1));
    assertEquals(
        addresses("10.0.0.5", "10.0.0.7"),
        DnsJoiner.seedNodes(self("10.0.0.6"), true, three, PORT, true, 1));
    assertEquals(
        addresses("10.0.0.5", "10.0.0.6"),
        DnsJoiner.seedNodes(self("10.0.0.7"), true, three, PORT, true, 1));
  }

  @Test
  void lowestIsNumericNotTextual() throws Exception {
    List<InetAddress> two = ips("10.0.0.10", "10.0.0.9");
    assertEquals(
        addresses("10.0.0.9", "10.0.0.10"),
        DnsJoiner.seedNodes(self("10.0.0.9"), true, two, PORT, true, 1));
    assertEquals(
        addresses("10.0.0.9"), DnsJoiner.seedNodes(self("10.0.0.10"), true, two, PORT, true, 1));
    assertEquals( // "10.0.0.1" < "9.255.255.255" as text: 9.255.255.255 is lower
        addresses("9.255.255.255"),
        DnsJoiner.seedNodes(
            self("10.0.0.1"), true, ips("10.0.0.1", "9.255.255.255"), PORT, true, 1));
  }

  @Test
  void theLowestOnlyJoinsUntilTheAddressesAreStableAndEnough() throws Exception {
    List<InetAddress> three = ips("10.0.0.5", "10.0.0.6", "10.0.0.7");
    assertEquals(
        addresses("10.0.0.6", "10.0.0.7"),
        DnsJoiner.seedNodes(self("10.0.0.5"), true, three, PORT, false, 1));
    assertEquals(
        addresses("10.0.0.6", "10.0.0.7"),
        DnsJoiner.seedNodes(self("10.0.0.5"), true, three, PORT, true, 4));
    assertEquals(
        addresses("10.0.0.5", "10.0.0.6", "10.0.0.7"),
        DnsJoiner.seedNodes(self("10.0.0.5"), true, three, PORT, true, 3));
  }

  @Test
  void aloneItFormsOnceStableAndWithoutItsRecordItOnlyJoins() throws Exception {
    Address self = self("10.0.0.5");
    assertEquals(List.of(self), DnsJoiner.seedNodes(self, true, ips("10.0.0.5"), PORT, true, 1));
    assertEquals(List.of(), DnsJoiner.seedNodes(self, true, ips("10.0.0.5"), PORT, false, 1));
    assertEquals(List.of(), DnsJoiner.seedNodes(self, true, List.of(), PORT, true, 1));
    // its own record is not there yet: lower than the others, it still only joins them
    assertEquals(
        addresses("10.0.0.6", "10.0.0.7"),
        DnsJoiner.seedNodes(self, true, ips("10.0.0.7", "10.0.0.6"), PORT, true, 1));
  }

  @Test
  void onAnotherPortOrUnderANameOrAsAClientItNeverForms() throws Exception {
    List<InetAddress> two = ips("10.0.0.5", "10.0.0.6");
    Address otherPort = new Address("pekko", NodeLauncher.SYSTEM_NAME, "10.0.0.5", PORT + 1);
    assertEquals(
        addresses("10.0.0.5", "10.0.0.6"),
        DnsJoiner.seedNodes(otherPort, true, two, PORT, true, 1));
    Address named = new Address("pekko", NodeLauncher.SYSTEM_NAME, "node-0", PORT);
    assertEquals(
        addresses("10.0.0.5", "10.0.0.6"), DnsJoiner.seedNodes(named, true, two, PORT, true, 1));
    assertEquals(
        addresses("10.0.0.6"), DnsJoiner.seedNodes(self("10.0.0.5"), false, two, PORT, true, 1));
  }

  @Test
  void theOrderPutsIpv4BeforeIpv6AndDropsRepeats() throws Exception {
    assertEquals(
        addresses("10.0.0.5", "0:0:0:0:0:0:0:1"),
        DnsJoiner.seedNodes(
            self("10.0.0.5"), true, ips("::1", "10.0.0.5", "10.0.0.5"), PORT, true, 1));
  }

  private static Address self(String ip) {
    return new Address("pekko", NodeLauncher.SYSTEM_NAME, ip, PORT);
  }

  private static List<Address> addresses(String... ips) {
    return Arrays.stream(ips).map(DnsJoinerTest::self).toList();
  }

  private static List<InetAddress> ips(String... literals) throws UnknownHostException {
    InetAddress[] out = new InetAddress[literals.length];
    for (int i = 0; i < literals.length; i++) {
      out[i] = InetAddress.getByName(literals[i]);
    }
    return List.of(out);
  }
}
