package org.tensorcache.chaostests;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Fault kinds and what the checks need from the files and logs around a fault. */
final class Faults {
  /** Faults injected into a running cluster, one at a time. */
  enum Kind {
    SIGKILL_COMPUTE,
    SIGTERM_COMPUTE,
    SIGKILL_COORDINATOR,
    SIGSTOP_COMPUTE
  }

  private static final Pattern SEGMENT = Pattern.compile("range-(\\d+)\\.safetensors");
  private static final Pattern COMPUTED =
      Pattern.compile("computed range (\\d+) group \\d+ \\((\\d+) examples\\) of (\\S+)");

  private Faults() {}

  /** Ranges with a segment file now. */
  static Set<Integer> persisted(Path segmentDir) throws IOException {
    Set<Integer> out = new HashSet<>();
    if (!Files.isDirectory(segmentDir)) {
      return out;
    }
    try (var files = Files.list(segmentDir)) {
      files.forEach(
          f -> {
            Matcher m = SEGMENT.matcher(f.getFileName().toString());
            if (m.matches()) {
              out.add(Integer.parseInt(m.group(1)));
            }
          });
    }
    return out;
  }

  /** Log lengths of {@code nodes} now: where to start counting computations after a fault. */
  static Map<NodeProcess, Integer> marks(List<NodeProcess> nodes) throws IOException {
    Map<NodeProcess, Integer> marks = new java.util.HashMap<>();
    for (NodeProcess n : nodes) {
      marks.put(n, n.logText().length());
    }
    return marks;
  }

  /**
   * Examples of {@code cacheId} computed in {@code ranges} by any of {@code nodes} after their mark
   * (from the start of the log for nodes without one).
   */
  static long computedIn(
      List<NodeProcess> nodes, Map<NodeProcess, Integer> marks, String cacheId, Set<Integer> ranges)
      throws IOException {
    long count = 0;
    for (NodeProcess n : nodes) {
      String text = n.logText();
      int from = Math.min(text.length(), marks.getOrDefault(n, 0));
      Matcher m = COMPUTED.matcher(text.substring(from));
      while (m.find()) {
        if (m.group(3).equals(cacheId) && ranges.contains(Integer.parseInt(m.group(1)))) {
          count += Long.parseLong(m.group(2));
        }
      }
    }
    return count;
  }

  /**
   * The ranges of {@code ranges} of which any of {@code nodes} computed examples after its mark
   * (from the start of the log for nodes without one).
   */
  static Set<Integer> rangesComputedIn(
      List<NodeProcess> nodes, Map<NodeProcess, Integer> marks, String cacheId, Set<Integer> ranges)
      throws IOException {
    Set<Integer> out = new java.util.TreeSet<>();
    for (NodeProcess n : nodes) {
      String text = n.logText();
      int from = Math.min(text.length(), marks.getOrDefault(n, 0));
      Matcher m = COMPUTED.matcher(text.substring(from));
      while (m.find()) {
        int range = Integer.parseInt(m.group(1));
        if (m.group(3).equals(cacheId) && ranges.contains(range)) {
          out.add(range);
        }
      }
    }
    return out;
  }

  /** Cuts a segment file to half its length. */
  static void truncate(Path file) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      f.setLength(f.length() / 2);
    }
  }

  /** Flips every bit of one byte near the end of a segment file (its values). */
  static void corrupt(Path file) throws IOException {
    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
      long at = f.length() - 5;
      f.seek(at);
      int b = f.read();
      f.seek(at);
      f.write(~b & 0xff);
    }
  }
}
