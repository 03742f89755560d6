package org.tensorcache.chaostests;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** What a node process's log says: the ports its {@code node up:} line names, when lines came. */
final class NodeLog {
  private static final Pattern PORTS =
      Pattern.compile("lookup-port=[^:\\s]+:(\\d+) management=[^:\\s]+:(\\d+)");

  private NodeLog() {}

  /** The node's lookup port (it was started with {@code --lookup-port}). */
  static InetSocketAddress lookupPort(NodeProcess n) throws IOException {
    return new InetSocketAddress("127.0.0.1", Integer.parseInt(ports(n).group(1)));
  }

  /** The node's management port (it was started with {@code --management-port}). */
  static int managementPort(NodeProcess n) throws IOException {
    return Integer.parseInt(ports(n).group(2));
  }

  /** The lines of {@code log} with {@code text}, each cut to its time stamp and what follows. */
  static List<String> linesWith(String log, String text) {
    List<String> out = new ArrayList<>();
    for (String line : log.split("\n")) {
      int at = line.indexOf(text);
      if (at >= 0) {
        out.add(line.substring(0, Math.min(12, at)) + line.substring(at + text.length()));
      }
    }
    return out;
  }

  /** The time stamp of the first line of {@code log} with {@code text}, or "-". */
  static String timeOf(String log, String text) {
    int at = log.indexOf(text);
    if (at < 0) {
      return "-";
    }
    int line = log.lastIndexOf('\n', at) + 1;
    return log.substring(line, Math.min(line + 12, at));
  }

  private static Matcher ports(NodeProcess n) throws IOException {
    Matcher m = PORTS.matcher(n.logText());
    if (!m.find()) {
      throw new IllegalStateException(n.name() + " printed no lookup and management ports");
    }
    return m;
  }
}
