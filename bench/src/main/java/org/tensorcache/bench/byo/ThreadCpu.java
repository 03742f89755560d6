package org.tensorcache.bench.byo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;

/**
 * CPU time of this process's threads grouped by their names, native threads included (libtorch's
 * OpenMP workers, the JIT, the garbage collector), from {@code /proc/self/task}: what a fill costs
 * besides the model. Empty where there is no {@code /proc}. Threads that end between two snapshots
 * are not counted.
 */
final class ThreadCpu {
  private static final Path TASKS = Path.of("/proc/self/task");
  private static final double TICKS_PER_S = 100; // USER_HZ on Linux

  private ThreadCpu() {}

  /** CPU seconds per thread id and name ({@code tid name}). */
  static Map<String, Double> snapshot() {
    Map<String, Double> out = new HashMap<>();
    if (!Files.isDirectory(TASKS)) {
      return out;
    }
    try (Stream<Path> tasks = Files.list(TASKS)) {
      for (Path task : tasks.toList()) {
        try {
          String stat = Files.readString(task.resolve("stat"));
          int open = stat.indexOf('(');
          int close = stat.lastIndexOf(')');
          String[] rest = stat.substring(close + 2).split(" ");
          // fields 14 and 15 of stat (utime, stime) are 11 and 12 after the name and state
          double s = (Long.parseLong(rest[11]) + Long.parseLong(rest[12])) / TICKS_PER_S;
          out.put(task.getFileName() + " " + stat.substring(open + 1, close), s);
        } catch (IOException | RuntimeException e) {
          // the thread ended while being read
        }
      }
    } catch (IOException e) {
      return out;
    }
    return out;
  }

  /**
   * CPU seconds spent between {@code before} and {@code after} per group of threads: the name with
   * its digits dropped ({@code GC Thread#0} and {@code GC Thread#1} are one group).
   */
  static Map<String, Double> groups(Map<String, Double> before, Map<String, Double> after) {
    Map<String, Double> out = new HashMap<>();
    for (var e : after.entrySet()) {
      double spent = e.getValue() - before.getOrDefault(e.getKey(), 0.0);
      if (spent > 0) {
        String name = e.getKey().substring(e.getKey().indexOf(' ') + 1);
        out.merge(name.replaceAll("[0-9]+", "#").strip(), spent, Double::sum);
      }
    }
    return out;
  }
}
