package org.tensorcache.actors.testing;

import java.time.Duration;

/**
 * Where a test holds the forward passes of its runners: open, every pass goes through; closed, a
 * pass waits at the gate until the test lets it through. A test that acts "during a fill" closes
 * the gate, lets a known number of passes through, and so knows how far the fill is when it acts.
 */
public final class Gate {
  /** How long a pass waits at a gate that nobody opens before it fails: a forgotten gate. */
  private static final Duration ABANDONED = Duration.ofMinutes(2);

  private boolean open = true;
  private int permits;
  private int held;
  private long passed;

  /** Holds every later pass at the gate until it is let through. */
  public synchronized void close() {
    open = false;
  }

  /** Lets {@code passes} held or later passes through, one each. */
  public synchronized void allow(int passes) {
    permits += passes;
    notifyAll();
  }

  /** Lets every pass through, those held now and every later one. */
  public synchronized void open() {
    open = true;
    notifyAll();
  }

  /** How many passes went through the gate so far. */
  public synchronized long passed() {
    return passed;
  }

  /** How many passes wait at the gate now. */
  public synchronized int held() {
    return held;
  }

  /** Waits until at least {@code count} passes wait at the gate. */
  public synchronized void awaitHeld(int count, Duration within) throws InterruptedException {
    awaitUntil(() -> held >= count, within, () -> held + " passes held, expected " + count);
  }

  /** Waits until at least {@code count} passes went through the gate. */
  public synchronized void awaitPassed(long count, Duration within) throws InterruptedException {
    awaitUntil(() -> passed >= count, within, () -> passed + " passes, expected " + count);
  }

  /** Called by a runner before each forward pass: returns once the pass may go on. */
  public synchronized void pass() {
    held++;
    notifyAll();
    try {
      long deadline = System.nanoTime() + ABANDONED.toNanos();
      while (!open && permits == 0) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw new IllegalStateException("a pass waited " + ABANDONED + " at a closed gate");
        }
        wait(Math.max(1, left / 1_000_000));
      }
      if (!open) {
        permits--;
      }
      passed++;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted at the gate", e);
    } finally {
      held--;
      notifyAll();
    }
  }

  private void awaitUntil(
      java.util.function.BooleanSupplier done,
      Duration within,
      java.util.function.Supplier<String> state)
      throws InterruptedException {
    long deadline = System.nanoTime() + within.toNanos();
    while (!done.getAsBoolean()) {
      long left = deadline - System.nanoTime();
      if (left <= 0) {
        throw new AssertionError(state.get() + " within " + within);
      }
      wait(Math.max(1, left / 1_000_000));
    }
  }
}
