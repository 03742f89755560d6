package org.tensorcache.actors.lookup;

import java.lang.management.ManagementFactory;

/** The bytes the current thread allocates, for tests that bound what a decoder allocates. */
final class Allocations {
  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  private Allocations() {}

  /**
   * Reads a frame from each kind of stream once (cut short, too long a frame, a whole frame), so
   * that the classes and call sites of {@link LookupFrames#read} are loaded and linked before
   * anything is measured: that allocates once, and is not what a bound on a read is about.
   */
  static void warmUpFrames(int maxFrame) {
    byte[][] streams = {{}, {0, 0, 0, (byte) 0x80}, {2, 0, 0, 0, 1}, {1, 0, 0, 0, 1}};
    for (byte[] stream : streams) {
      try {
        new LookupFrames().read(new java.io.ByteArrayInputStream(stream), maxFrame);
      } catch (java.io.IOException expected) {
        // each kind of ending once
      }
    }
  }

  /** Bytes allocated by the current thread so far (a running total: take differences). */
  static long now() {
    return THREADS.getCurrentThreadAllocatedBytes();
  }
}
