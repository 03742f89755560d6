package org.tensorcache.bench.scale;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.ObjectName;

/**
 * What this JVM holds: heap used after full collections, direct and mapped buffers, the Native
 * Memory Tracking summary (with {@code -XX:NativeMemoryTracking=summary}) and the class histogram,
 * read through the diagnostic commands {@code jcmd} runs. The histogram stays in a file: held in
 * memory, one snapshot's (thousands of rows) would be counted in the next snapshot's heap.
 */
record MemoryProbe(
    long heapUsed, long direct, long mapped, Map<String, Long> nmtCommitted, Path histogram) {
  private static final Pattern NMT_CATEGORY =
      Pattern.compile("^-\\s+(.+?)\\s+\\(reserved=(\\d+)KB, committed=(\\d+)KB\\)");
  private static final Pattern HISTOGRAM_ROW =
      Pattern.compile("^\\s*\\d+:\\s+(\\d+)\\s+(\\d+)\\s+(\\S+)");

  /** Writes the class histogram to {@code histogramFile}, then collects fully and measures. */
  static MemoryProbe take(Path histogramFile) throws Exception {
    Files.writeString(histogramFile, command("gcClassHistogram"));
    long heap = settle();
    long direct = 0;
    long mapped = 0;
    for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
      if (pool.getName().equals("direct")) {
        direct += pool.getMemoryUsed();
      } else {
        mapped += pool.getMemoryUsed();
      }
    }
    Map<String, Long> nmt = new LinkedHashMap<>(); // empty when tracking is off
    for (String line : command("vmNativeMemory", "summary").split("\n")) {
      Matcher m = NMT_CATEGORY.matcher(line);
      if (m.find()) {
        nmt.put(m.group(1).trim(), Long.parseLong(m.group(3)) * 1024);
      }
    }
    return new MemoryProbe(heap, direct, mapped, nmt, histogramFile);
  }

  /** Full collections until the used heap stops shrinking (at most five); the heap used. */
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

  /** NMT committed bytes outside the Java heap and NMT's own bookkeeping. */
  long offHeap() {
    return nmtCommitted.entrySet().stream()
        .filter(e -> !e.getKey().equals("Java Heap") && !e.getKey().contains("Tracking"))
        .mapToLong(Map.Entry::getValue)
        .sum();
  }

  /** The class histogram: instances and bytes per class, the largest first. */
  Map<String, long[]> classes() throws IOException {
    Map<String, long[]> out = new LinkedHashMap<>();
    for (String line : Files.readString(histogram).split("\n")) {
      Matcher m = HISTOGRAM_ROW.matcher(line);
      if (m.find()) {
        out.put(m.group(3), new long[] {Long.parseLong(m.group(1)), Long.parseLong(m.group(2))});
      }
    }
    return out;
  }

  /** A class's change in a histogram: instances and bytes. */
  record ClassDelta(@JsonProperty("class") String name, long instances, long bytes) {}

  /** The {@code top} classes whose bytes changed most from {@code before} (may be empty). */
  static List<ClassDelta> delta(Map<String, long[]> before, Map<String, long[]> after, int top) {
    Set<String> classes = new LinkedHashSet<>(after.keySet()); // its order among equal changes
    classes.addAll(before.keySet());
    return classes.stream()
        .map(
            c -> {
              long[] b = before.getOrDefault(c, new long[2]);
              long[] a = after.getOrDefault(c, new long[2]);
              return new ClassDelta(c, a[0] - b[0], a[1] - b[1]);
            })
        .sorted(Comparator.comparingLong(d -> -Math.abs(d.bytes())))
        .limit(top)
        .toList();
  }

  /** Runs a diagnostic command ({@code jcmd}'s, in camel case) in this JVM. */
  private static String command(String operation, String... args) throws Exception {
    ObjectName name = new ObjectName("com.sun.management:type=DiagnosticCommand");
    return (String)
        ManagementFactory.getPlatformMBeanServer()
            .invoke(name, operation, new Object[] {args}, new String[] {String[].class.getName()});
  }
}
