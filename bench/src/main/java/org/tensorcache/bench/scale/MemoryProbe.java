package org.tensorcache.bench.scale;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.ObjectName;

/**
 * What this JVM holds, measured: heap used after full collections, direct and mapped buffers, the
 * Native Memory Tracking summary (the JVM must run with {@code -XX:NativeMemoryTracking=summary})
 * and the class histogram, read through the same diagnostic commands {@code jcmd} runs.
 */
final class MemoryProbe {
  private static final Pattern NMT_CATEGORY =
      Pattern.compile("^-\\s+(.+?)\\s+\\(reserved=(\\d+)KB, committed=(\\d+)KB\\)");
  private static final Pattern HISTOGRAM_ROW =
      Pattern.compile("^\\s*\\d+:\\s+(\\d+)\\s+(\\d+)\\s+(\\S+)");

  private MemoryProbe() {}

  /**
   * One measurement of the JVM. The class histogram stays in a file: held in memory, one snapshot's
   * histogram (thousands of rows) would be counted in the next snapshot's heap.
   */
  record Snapshot(
      long heapUsed, long direct, long mapped, Map<String, Long> nmtCommitted, Path histogram) {
    /** NMT committed bytes outside the Java heap and NMT's own bookkeeping. */
    long offHeap() {
      long sum = 0;
      for (var e : nmtCommitted.entrySet()) {
        if (!e.getKey().equals("Java Heap") && !e.getKey().contains("Tracking")) {
          sum += e.getValue();
        }
      }
      return sum;
    }
  }

  /**
   * Writes the class histogram to {@code histogramFile}, then collects fully (several times, so
   * that the histogram's text and other garbage are gone) and measures.
   */
  static Snapshot take(Path histogramFile) throws Exception {
    Files.writeString(histogramFile, command("gcClassHistogram"));
    settle();
    long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    long direct = 0;
    long mapped = 0;
    for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
      if (pool.getName().equals("direct")) {
        direct += pool.getMemoryUsed();
      } else {
        mapped += pool.getMemoryUsed();
      }
    }
    return new Snapshot(heap, direct, mapped, nmt(), histogramFile);
  }

  /** Full collections until the used heap stops shrinking (at most five). */
  static long settle() throws InterruptedException {
    long before = Long.MAX_VALUE;
    for (int i = 0; i < 5; i++) {
      System.gc();
      Thread.sleep(100);
      long used = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
      if (used >= before - (1 << 16)) {
        return used;
      }
      before = used;
    }
    return before;
  }

  /** Committed bytes per NMT category, empty when tracking is off. */
  static Map<String, Long> nmt() throws Exception {
    Map<String, Long> out = new LinkedHashMap<>();
    for (String line : command("vmNativeMemory", "summary").split("\n")) {
      Matcher m = NMT_CATEGORY.matcher(line);
      if (m.find()) {
        out.put(m.group(1).trim(), Long.parseLong(m.group(3)) * 1024);
      }
    }
    return out;
  }

  /** The histogram {@link #take} wrote to {@code file}. */
  static Map<String, long[]> histogram(Path file) throws java.io.IOException {
    return parseHistogram(Files.readString(file));
  }

  private static Map<String, long[]> parseHistogram(String text) {
    Map<String, long[]> out = new LinkedHashMap<>();
    for (String line : text.split("\n")) {
      Matcher m = HISTOGRAM_ROW.matcher(line);
      if (m.find()) {
        out.put(m.group(3), new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2))});
      }
    }
    return out;
  }

  /** The classes whose bytes changed most from {@code before} to {@code after}. */
  static List<Map<String, Object>> histogramDelta(
      Map<String, long[]> before, Map<String, long[]> after, int top) {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (var e : after.entrySet()) {
      long[] b = before.getOrDefault(e.getKey(), new long[2]);
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("class", e.getKey());
      row.put("instances", e.getValue()[0] - b[0]);
      row.put("bytes", e.getValue()[1] - b[1]);
      rows.add(row);
    }
    for (var e : before.entrySet()) {
      if (!after.containsKey(e.getKey())) {
        rows.add(
            new LinkedHashMap<>(
                Map.of(
                    "class",
                    e.getKey(),
                    "instances",
                    -e.getValue()[0],
                    "bytes",
                    -e.getValue()[1])));
      }
    }
    rows.sort(
        (x, y) -> Long.compare(Math.abs((long) y.get("bytes")), Math.abs((long) x.get("bytes"))));
    return new ArrayList<>(rows.subList(0, Math.min(top, rows.size())));
  }

  /** The first {@code count} rows of a histogram (the largest classes). */
  static List<Map<String, Object>> top(Map<String, long[]> histogram, int count) {
    List<Map<String, Object>> rows = new ArrayList<>();
    for (var e : histogram.entrySet()) {
      if (rows.size() == count) {
        break;
      }
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("class", e.getKey());
      row.put("instances", e.getValue()[0]);
      row.put("bytes", e.getValue()[1]);
      rows.add(row);
    }
    return rows;
  }

  /** Runs a diagnostic command ({@code jcmd}'s, in camel case) in this JVM. */
  private static String command(String operation, String... args) throws Exception {
    ObjectName name = new ObjectName("com.sun.management:type=DiagnosticCommand");
    return (String)
        ManagementFactory.getPlatformMBeanServer()
            .invoke(name, operation, new Object[] {args}, new String[] {String[].class.getName()});
  }
}
