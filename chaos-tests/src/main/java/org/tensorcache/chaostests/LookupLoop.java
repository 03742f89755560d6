package org.tensorcache.chaostests;

import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Looks random batches up through the client member while faults happen, checking every value. */
final class LookupLoop implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(LookupLoop.class);

  final AtomicLong lookups = new AtomicLong();
  final AtomicLong failures = new AtomicLong();
  final AtomicLong wrong = new AtomicLong();

  /** {start, end} nanos of every lookup that returned values, in order. */
  private final java.util.List<long[]> served =
      java.util.Collections.synchronizedList(new java.util.ArrayList<>());

  private final Thread thread;
  private volatile boolean running = true;

  LookupLoop(ClientMember client, ExpectedValues reference, long n, SplittableRandom random) {
    thread =
        new Thread(
            () -> {
              while (running) {
                long[] indices = new long[32];
                for (int i = 0; i < indices.length; i++) {
                  indices[i] = random.nextLong(n);
                }
                long began = System.nanoTime();
                try {
                  long bad = reference.mismatches(client.lookup(indices));
                  served.add(new long[] {began, System.nanoTime()});
                  wrong.addAndGet(bad);
                  lookups.incrementAndGet();
                } catch (RuntimeException e) {
                  if (running) {
                    failures.incrementAndGet();
                    log.info("lookup failed: {}", e.toString());
                  }
                }
                try {
                  Thread.sleep(100);
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            "chaos-lookups");
    thread.setDaemon(true);
    thread.start();
  }

  /**
   * Ms from {@code since} (nanos) to the end of the first lookup that began at or after it and
   * returned values, waiting up to {@code within} for one; -1 if none did.
   */
  long servedAfter(long since, java.time.Duration within) throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (true) {
      synchronized (served) {
        for (long[] s : served) {
          if (s[0] - since >= 0) {
            return (s[1] - since) / 1_000_000;
          }
        }
      }
      if (System.nanoTime() - deadline > 0 || !running) {
        return -1;
      }
      Thread.sleep(50);
    }
  }

  @Override
  public void close() throws InterruptedException {
    running = false;
    thread.interrupt();
    thread.join(40_000);
  }
}
