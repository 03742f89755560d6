package org.tensorcache.bench.remote;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.LongSupplier;

/**
 * CPU time a process has used, in nanoseconds. On a busy machine latency mostly measures the
 * scheduler; CPU time per batch is what a request costs whatever else runs, so it says where the
 * time goes.
 */
public final class CpuMeter {
  private static final long NANOS_PER_TICK = 10_000_000L; // Linux USER_HZ is 100

  private CpuMeter() {}

  /** This JVM's CPU time (every thread, JIT and GC included). */
  public static LongSupplier self() {
    var os =
        (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    return os::getProcessCpuTime;
  }

  /** The CPU time of process {@code pid} from {@code /proc}; -1 where it cannot be read. */
  public static LongSupplier process(long pid) {
    Path stat = Path.of("/proc", Long.toString(pid), "stat");
    return () -> {
      try {
        String s = Files.readString(stat);
        // the command name may hold spaces: the fields that follow start after its ')'
        String[] f = s.substring(s.lastIndexOf(')') + 2).split(" ");
        return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * NANOS_PER_TICK;
      } catch (IOException | RuntimeException e) {
        return -1;
      }
    };
  }
}
