package org.tensorcache.bench.byo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Memory from {@code /proc}, as {@code scripts/bench_trl.py} reads it: this process's ({@code
 * /proc/self/status}: {@code VmRSS} now, {@code VmHWM} its peak) or the machine's ({@code
 * /proc/meminfo}: {@code MemAvailable}, {@code MemTotal}), in bytes; -1 where there is none. Also
 * the machine's CPU and load.
 */
final class ProcMemory {
  private ProcMemory() {}

  static long bytes(String file, String key) {
    try {
      return Long.parseLong(field(file, key).split("\\s+")[0]) << 10;
    } catch (RuntimeException e) {
      return -1;
    }
  }

  /** The value of line {@code key: value} of {@code file}, or null. */
  static String field(String file, String key) {
    try {
      for (String line : Files.readAllLines(Path.of(file))) {
        if (line.startsWith(key) && line.substring(key.length()).strip().startsWith(":")) {
          return line.substring(line.indexOf(':') + 1).strip();
        }
      }
    } catch (IOException e) {
      return null;
    }
    return null;
  }

  /** This process's resident MiB now ({@code VmRSS}) or at its peak ({@code VmHWM}). */
  static long mib(String key) {
    return mib(bytes("/proc/self/status", key));
  }

  static long available() {
    return bytes("/proc/meminfo", "MemAvailable");
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

  static long mib(long bytes) {
    return bytes < 0 ? -1 : Math.round(bytes / 1048576.0);
  }
}
