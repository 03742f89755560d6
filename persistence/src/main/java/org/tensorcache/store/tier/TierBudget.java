package org.tensorcache.store.tier;

/**
 * The bytes a {@link HotTier} holds against its budget, hot blocks and reserved bytes alike, and
 * the most it ever held. Changed only under the tier's lock; read without it.
 */
final class TierBudget {
  private final long budget;
  private volatile long held;
  private volatile long peak;

  TierBudget(long budgetBytes) {
    if (budgetBytes <= 0) {
      throw new IllegalArgumentException(
          "hot tier budget " + budgetBytes + " bytes, expected more than 0");
    }
    this.budget = budgetBytes;
  }

  /** The bytes that must be freed for {@code more} to fit; 0 or less when they fit now. */
  long excessWith(long more) {
    return held + more - budget;
  }

  /** Counts {@code bytes} more held (fewer when negative). */
  void add(long bytes) {
    held += bytes; // only the tier's lock holder writes it
    if (held > peak) {
      peak = held;
    }
  }

  long budgetBytes() {
    return budget;
  }

  long held() {
    return held;
  }

  long peak() {
    return peak;
  }
}
