package org.tensorcache.launch;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * {@code --seeds dns:NAME[:PORT]}: the members are at every address that NAME resolves to (what a
 * Kubernetes headless service gives: one record per pod), each on PORT.
 *
 * @param name the DNS name
 * @param port the members' Artery port; 0 until {@link #withDefaultPort} gives the default
 */
public record DnsSeeds(String name, int port) {
  /** What a {@code --seeds} value starts with to name a DNS name rather than host:port entries. */
  public static final String PREFIX = "dns:";

  private static final String EXAMPLE = "e.g. dns:tensorcache.default.svc.cluster.local";
  private static final String LABEL = "[A-Za-z0-9_]([A-Za-z0-9_-]*[A-Za-z0-9_])?";
  private static final Pattern LABELS = Pattern.compile(LABEL + "(\\." + LABEL + ")*\\.?");
  private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");
  private static final Pattern IPV6 = Pattern.compile("[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*");

  /**
   * The DNS name of a {@code --seeds} value; empty when the value lists host:port entries or
   * nothing. One {@code dns:} entry is all the value may hold: with others it is an error.
   */
  public static Optional<DnsSeeds> parse(String text) {
    if (text == null || text.isBlank()) {
      return Optional.empty();
    }
    List<String> entries = Arrays.stream(text.split(",", -1)).map(String::trim).toList();
    if (entries.stream().noneMatch(DnsSeeds::isDns)) {
      return Optional.empty();
    }
    if (entries.size() > 1) {
      throw new IllegalArgumentException(
          "--seeds '"
              + text
              + "' mixes dns: with other entries, expected one dns:NAME[:PORT] alone or"
              + " host:port,... entries");
    }
    return Optional.of(parseEntry(entries.get(0)));
  }

  private static boolean isDns(String entry) {
    return entry.regionMatches(true, 0, PREFIX, 0, PREFIX.length());
  }

  private static DnsSeeds parseEntry(String entry) {
    String rest = entry.substring(PREFIX.length());
    String name = rest;
    int port = 0;
    int colon = rest.lastIndexOf(':');
    if (colon >= 0) {
      name = rest.substring(0, colon);
      String digits = rest.substring(colon + 1);
      try {
        port = Integer.parseInt(digits);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(
            "seed '"
                + entry
                + "' has no numeric port, expected dns:NAME[:PORT], "
                + EXAMPLE
                + ":25520");
      }
      HostPort.checkPort(port, "seed '" + entry + "': port");
    }
    if (name.isEmpty()) {
      throw new IllegalArgumentException(
          "seed '" + entry + "' has an empty name, expected dns:NAME[:PORT], " + EXAMPLE);
    }
    if (!LABELS.matcher(name).matches()) {
      throw new IllegalArgumentException(
          "seed '"
              + entry
              + "': '"
              + name
              + "' is no DNS name, expected letters, digits, '-' and '_' in labels separated by"
              + " '.', "
              + EXAMPLE);
    }
    return new DnsSeeds(name, port);
  }

  /** These seeds with {@code port} where no port was given (a node's own Artery port). */
  public DnsSeeds withDefaultPort(int defaultPort) {
    return port != 0 ? this : new DnsSeeds(name, defaultPort);
  }

  /**
   * The address that {@code host} (a node's {@code --host}) is, when it is an IP address written
   * the way Java writes the addresses a name resolves to ({@code 10.0.0.5}); empty for a host name
   * or another spelling. No name is looked up.
   */
  public static Optional<InetAddress> ipAddress(String host) {
    if (!IPV4.matcher(host).matches() && !IPV6.matcher(host).matches()) {
      return Optional.empty(); // a name: getByName would look it up
    }
    try {
      InetAddress address = InetAddress.getByName(host);
      return address.getHostAddress().equals(host) ? Optional.of(address) : Optional.empty();
    } catch (UnknownHostException e) {
      return Optional.empty(); // e.g. 300.1.1.1
    }
  }

  /**
   * The address of a node's {@code host}, which must be an IP address as the name's records give
   * it: the other members reach this one at the addresses they resolve, and Artery only accepts
   * messages sent to the address it was started with; and only so can this node find itself among
   * the addresses (to decide whether it is the one that forms the cluster).
   */
  public InetAddress requireIpAddress(String host) {
    return ipAddress(host)
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    "--host '"
                        + host
                        + "' with --seeds "
                        + this
                        + ": expected this node's IP address as the records of "
                        + name
                        + " give it, e.g. 10.0.0.5 (on Kubernetes the pod IP, status.podIP)"));
  }

  @Override
  public String toString() {
    return PREFIX + name + (port == 0 ? "" : ":" + port);
  }
}
