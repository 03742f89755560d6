package org.tensorcache.actors.lookup;

import java.lang.management.ManagementFactory;

/** The bytes the current thread allocates, for tests that bound what a decoder allocates. */
final class Allocations {
  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  private Allocations() {}

  /** Bytes allocated by the current thread so far (a running total: take differences). */
  static long now() {
    return THREADS.getCurrentThreadAllocatedBytes();
  }
}
