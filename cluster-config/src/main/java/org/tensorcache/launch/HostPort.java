package org.tensorcache.launch;

import java.util.ArrayList;
import java.util.List;

/** A {@code host:port} of a cluster member, as given on the command line. */
public record HostPort(String host, int port) {
  /** Checks the parts; {@code port} must be 1..65535. */
  public HostPort {
    if (host.isBlank()) {
      throw new IllegalArgumentException("empty host, expected a name or an IP address");
    }
    checkPort(port, "port");
  }

  /** Parses {@code text}, e.g. {@code 10.0.0.5:25520}; {@code what} names it in errors. */
  public static HostPort parse(String text, String what) {
    int colon = text.lastIndexOf(':');
    if (colon <= 0 || colon == text.length() - 1) {
      throw new IllegalArgumentException(
          what + " '" + text + "' is not host:port, expected e.g. 127.0.0.1:25520");
    }
    int port;
    try {
      port = Integer.parseInt(text.substring(colon + 1));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          what + " '" + text + "' has no numeric port, expected e.g. 127.0.0.1:25520");
    }
    checkPort(port, what + " '" + text + "': port");
    return new HostPort(text.substring(0, colon), port);
  }

  /** Parses a comma-separated list; blank gives an empty list. */
  public static List<HostPort> parseList(String text, String what) {
    List<HostPort> out = new ArrayList<>();
    if (text == null || text.isBlank()) {
      return out;
    }
    for (String part : text.split(",", -1)) {
      out.add(parse(part.trim(), what));
    }
    return out;
  }

  /** Throws naming {@code port} unless it is 1..65535. */
  public static void checkPort(int port, String what) {
    if (port < 1 || port > 65535) {
      throw OptionRanges.invalid(what, port, "1..65535");
    }
  }

  @Override
  public String toString() {
    return host + ":" + port;
  }
}
