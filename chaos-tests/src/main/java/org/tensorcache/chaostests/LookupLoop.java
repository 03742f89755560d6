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
  private final Thread thread;
  private volatile boolean running = true;

  LookupLoop(ClientMember client, Reference reference, long n, SplittableRandom random) {
    thread =
        new Thread(
            () -> {
              while (running) {
                long[] indices = new long[32];
                for (int i = 0; i < indices.length; i++) {
                  indices[i] = random.nextLong(n);
                }
                try {
                  long bad = reference.mismatches(client.lookup(indices));
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

  @Override
  public void close() throws InterruptedException {
    running = false;
    thread.interrupt();
    thread.join(40_000);
  }
}
