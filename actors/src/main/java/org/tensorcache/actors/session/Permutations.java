package org.tensorcache.actors.session;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The seeded permutations of epochs, with a small cache shared by every sampler of the JVM.
 *
 * <p>The generator is SplitMix64 written out here, and bounded draws use Lemire's unbiased
 * multiply-and-reject method, so the order depends on nothing but (n, seed, epoch): not on the JDK
 * version or vendor, whose {@code Random} and {@code SplittableRandom} give no such promise for
 * bounded draws.
 */
final class Permutations {

  /** Largest number of examples whose permutation fits in one {@code int[]}. */
  static final long MAX_EXAMPLES = Integer.MAX_VALUE - 8;

  /**
   * Epoch orders kept at once. The ranks of a run on one node share each entry, and two entries
   * cover the boundary of an epoch, where some ranks are already in the next one.
   */
  private static final int CACHED = 4;

  private record Key(long n, long seed, long epoch) {}

  private static final Map<Key, int[]> CACHE = new LinkedHashMap<>(8, 0.75f, true);

  private Permutations() {}

  /**
   * Returns the order of {@code epoch} if it is cached, else null; never computes it, so that a
   * caller on an actor's thread can tell whether {@link #of} would take long.
   */
  static int[] cached(long n, long seed, long epoch) {
    synchronized (CACHE) {
      return CACHE.get(new Key(n, seed, epoch));
    }
  }

  /**
   * Returns the order of {@code epoch}: a permutation of {@code [0, n)}; shared, never to be
   * written. Computes it unless cached, which takes seconds for tens of millions of examples.
   */
  static int[] of(long n, long seed, long epoch) {
    Key key = new Key(n, seed, epoch);
    synchronized (CACHE) {
      int[] cached = CACHE.get(key);
      if (cached != null) {
        return cached;
      }
    }
    // computed outside the lock: a shuffle of tens of millions takes a while, and a race only
    // computes the same array twice
    int[] order = shuffle((int) n, epochSeed(seed, epoch));
    synchronized (CACHE) {
      CACHE.put(key, order);
      Iterator<int[]> eldest = CACHE.values().iterator();
      while (CACHE.size() > CACHED) {
        eldest.next();
        eldest.remove();
      }
    }
    return order;
  }

  /** Computes a Fisher–Yates shuffle of {@code [0, n)} driven by SplitMix64 from {@code state}. */
  static int[] shuffle(int n, long state) {
    int[] order = new int[n];
    for (int i = 0; i < n; i++) {
      order[i] = i;
    }
    SplitMix64 random = new SplitMix64(state);
    for (int i = n - 1; i > 0; i--) {
      int j = random.nextInt(i + 1);
      int swap = order[i];
      order[i] = order[j];
      order[j] = swap;
    }
    return order;
  }

  /** Derives the generator's start state of an epoch; neighbouring seeds and epochs diverge. */
  static long epochSeed(long seed, long epoch) {
    return mix64(mix64(seed) ^ mix64(epoch * GOLDEN_GAMMA + 0x632BE59BD9B4E019L));
  }

  private static final long GOLDEN_GAMMA = 0x9E3779B97F4A7C15L;

  /** SplitMix64 (Steele, Lea and Flood, 2014) with unbiased bounded draws. */
  private static final class SplitMix64 {
    private long state;

    SplitMix64(long state) {
      this.state = state;
    }

    long nextLong() {
      state += GOLDEN_GAMMA;
      return mix64(state);
    }

    /** Returns a value in {@code [0, bound)} by Lemire's multiply-and-reject method. */
    int nextInt(int bound) {
      long m = (nextLong() >>> 32) * bound;
      long low = m & 0xFFFFFFFFL;
      if (low < bound) {
        long threshold = (0x1_0000_0000L - bound) % bound;
        while (low < threshold) {
          m = (nextLong() >>> 32) * bound;
          low = m & 0xFFFFFFFFL;
        }
      }
      return (int) (m >>> 32);
    }
  }

  /** The output function of SplitMix64 (Steele, Lea and Flood, 2014). */
  private static long mix64(long z) {
    z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
    z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
    return z ^ (z >>> 31);
  }
}
