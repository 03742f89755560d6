package org.tensorcache.bench.byo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * This process's resident memory from {@code /proc/self/status}: now ({@code VmRSS}) and its peak
 * ({@code VmHWM}), as {@code scripts/bench_trl.py} reads them in Python; the machine's memory and
 * load; -1 (or "") where there is no {@code /proc}.
 */
final class ProcMemory {
  private static final Path STATUS = Path.of("/proc/self/status");
  private static final Path MEMINFO = Path.of("/proc/meminfo");

  private ProcMemory() {}

  /** Resident bytes now. */
  static long rss() {
    return kib(STATUS, "VmRSS");
  }

  /** The most resident bytes so far. */
  static long peakRss() {
    return kib(STATUS, "VmHWM");
  }

  /** The machine's memory available to a new process ({@code MemAvailable}), or -1. */
  static long available() {
    return kib(MEMINFO, "MemAvailable");
  }

  /** The machine's memory ({@code MemTotal}), or -1. */
  static long total() {
    return kib(MEMINFO, "MemTotal");
  }

  private static long kib(Path file, String key) {
    try {
      for (String line : Files.readAllLines(file)) {
        if (line.startsWith(key + ":")) {
          return Long.parseLong(line.substring(key.length() + 1).trim().split("\\s+")[0]) << 10;
        }
      }
    } catch (IOException | RuntimeException e) {
      return -1;
    }
    return -1;
  }

  /** The load average over the last minute, five and fifteen ({@code /proc/loadavg}), or "". */
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
