package org.tensorcache.actors.cache;

import java.time.Duration;

/**
 * When a segment write that failed (a full disk, an I/O error) may be tried again: one base delay
 * after the first failure, twice as long after each further one, never more than a maximum apart; a
 * success starts over. A range whose write failed is so written later without a retry storm on a
 * disk that stays full, and without the fill waiting more than the maximum once space is back.
 */
public final class WriteBackoff {
  private final Duration first;
  private final Duration max;
  private int failures;
  private long notBefore;

  /** Backoff from {@code first} up to {@code max}. */
  public WriteBackoff(Duration first, Duration max) {
    this.first = first;
    this.max = max.compareTo(first) < 0 ? first : max;
  }

  /** The backoff of a node: its coordinator tick up to its {@code write-retry-max}. */
  public static WriteBackoff of(NodeSettings settings) {
    return new WriteBackoff(settings.coordinatorTick(), settings.writeRetryMax());
  }

  /** Whether a write may start now (no failure, or its delay has passed). */
  public boolean due() {
    return failures == 0 || System.nanoTime() - notBefore >= 0;
  }

  /** A write failed: the delay before the next one. */
  public Duration failed() {
    failures++;
    Duration delay = first;
    for (int i = 1; i < failures && delay.compareTo(max) < 0; i++) {
      delay = delay.multipliedBy(2);
    }
    if (delay.compareTo(max) > 0) {
      delay = max;
    }
    notBefore = System.nanoTime() + delay.toNanos();
    return delay;
  }

  /** How many writes failed in a row. */
  public int failures() {
    return failures;
  }

  /** A write succeeded. */
  public void succeeded() {
    failures = 0;
  }
}
