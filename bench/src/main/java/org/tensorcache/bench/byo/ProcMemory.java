package org.tensorcache.bench.byo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Resident memory of this process ({@code /proc/self/status}, as {@code scripts/bench_trl.py} reads
 * it) and the machine's memory and load; -1 (or "") where there is no {@code /proc}.
 */
final class ProcMemory {
  private ProcMemory() {}

  /** Resident bytes now ({@code VmRSS}). */
  static long rss() {
    return kib("/proc/self/status", "VmRSS");
  }

  /** The most resident bytes so far ({@code VmHWM}). */
  static long peakRss() {
    return kib("/proc/self/status", "VmHWM");
  }

  /** The machine's memory available to a new process ({@code MemAvailable}). */
  static long available() {
    return kib("/proc/meminfo", "MemAvailable");
  }

  static long total() {
    return kib("/proc/meminfo", "MemTotal");
  }

  private static long kib(String file, String key) {
    try {
      for (String line : Files.readAllLines(Path.of(file))) {
        if (line.startsWith(key + ":")) {
          return Long.parseLong(line.substring(key.length() + 1).trim().split("\\s+")[0]) << 10;
        }
      }
    } catch (IOException | RuntimeException e) {
      return -1;
    }
    return -1;
  }

  /** The load average over the last minute, five and fifteen. */
  static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).split(" ");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (IOException | RuntimeException e) {
      return "";
    }
  }

  /** {@code bytes} in MiB, rounded. */
  static long mib(long bytes) {
    return bytes < 0 ? -1 : Math.round(bytes / 1048576.0);
  }
}
