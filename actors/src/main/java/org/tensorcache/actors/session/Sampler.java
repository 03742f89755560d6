package org.tensorcache.actors.session;

/**
 * The deterministic sampler of a training run: maps a global step and a rank to the example indices
 * of that rank's share of the step's batch, as a pure function of its configuration.
 *
 * <p>The order of epoch {@code e} is a permutation of {@code [0, examples)} decided by {@code
 * (seed, e)} alone. An epoch has {@code examples / globalBatch} steps: the last {@code examples %
 * globalBatch} positions of each epoch's order are dropped, so every step has a full batch. Global
 * step {@code s} is step {@code s % stepsPerEpoch} of epoch {@code s / stepsPerEpoch} and covers
 * positions {@code [(s % stepsPerEpoch) * G, +G)} of that epoch's order; rank {@code r} of the
 * world of {@code W} in force at {@code s} takes positions {@code [r*G/W, (r+1)*G/W)} of them. A
 * change of world size at a step boundary therefore only changes the slicing of the steps after it:
 * across the ranks of whichever world is in force, each position of an epoch is served once.
 *
 * <p>Epoch orders are kept in a small cache shared by every sampler of the JVM (one {@code int[]}
 * of {@code examples} per epoch), so a call does not shuffle again.
 *
 * @param examples number of examples {@code n}, in {@code [1, 2^31 - 9]}
 * @param seed seed of the epoch orders
 * @param globalBatch examples per global step {@code G}, in {@code [1, n]}
 * @param schedule world sizes over the steps; each divides {@code G}
 */
public record Sampler(long examples, long seed, int globalBatch, WorldSchedule schedule) {

  /** Checks the configuration. */
  public Sampler {
    checkConfig(examples, globalBatch);
    int[] sizes = schedule.worldSizes();
    for (int worldSize : sizes) {
      checkWorldSize(globalBatch, worldSize);
    }
  }

  /** Creates a sampler whose world size is {@code worldSize} at every step. */
  public static Sampler of(long examples, long seed, int globalBatch, int worldSize) {
    return new Sampler(examples, seed, globalBatch, WorldSchedule.of(0, worldSize));
  }

  /**
   * Checks the number of examples and the global batch size.
   *
   * @throws IllegalArgumentException naming the bad value and the range expected
   */
  public static void checkConfig(long examples, int globalBatch) {
    if (examples < 1 || examples > Permutations.MAX_EXAMPLES) {
      throw new IllegalArgumentException(
          "number of examples "
              + examples
              + " out of range [1, "
              + Permutations.MAX_EXAMPLES
              + "]");
    }
    if (globalBatch < 1 || globalBatch > examples) {
      throw new IllegalArgumentException(
          "global batch "
              + globalBatch
              + " out of range [1, "
              + examples
              + "] for "
              + examples
              + " examples");
    }
  }

  /**
   * Checks that {@code worldSize} ranks can share a global batch of {@code globalBatch}.
   *
   * @throws IllegalArgumentException if the world size is below 1 or does not divide the batch
   */
  public static void checkWorldSize(int globalBatch, int worldSize) {
    if (worldSize < 1) {
      throw new IllegalArgumentException("world size " + worldSize + " must be at least 1");
    }
    if (globalBatch % worldSize != 0) {
      throw new IllegalArgumentException(
          "world size " + worldSize + " does not divide global batch " + globalBatch);
    }
  }

  /** Returns a sampler of the same run whose world sizes follow {@code next}. */
  public Sampler withSchedule(WorldSchedule next) {
    return new Sampler(examples, seed, globalBatch, next);
  }

  /** Returns the number of steps of an epoch, {@code examples / globalBatch}. */
  public long stepsPerEpoch() {
    return examples / globalBatch;
  }

  /** Returns the epoch that global step {@code step} belongs to. */
  public long epochOf(long step) {
    checkStep(step);
    return step / stepsPerEpoch();
  }

  /** Returns the world size in force at {@code step}. */
  public int worldSizeAt(long step) {
    checkStep(step);
    return schedule.worldSizeAt(step);
  }

  /**
   * Returns the {@code G} indices of global step {@code step}, in the order the ranks split them.
   */
  public long[] batch(long step) {
    return positions(step, 0, globalBatch, order(epochOf(step)));
  }

  /**
   * Returns the indices that rank {@code rank} trains on at global step {@code step}: {@code G/W}
   * of them, with {@code W} the world size in force at that step.
   *
   * @throws IllegalArgumentException if the step is negative or precedes the schedule, or the rank
   *     is outside {@code [0, W)}
   */
  public long[] indices(long step, int rank) {
    checkShare(step, rank);
    return indices(step, rank, order(epochOf(step)));
  }

  /**
   * Checks that rank {@code rank} has a share of global step {@code step}, as {@link #indices(long,
   * int)} does before it needs the epoch's order.
   *
   * @throws IllegalArgumentException if the step is negative or precedes the schedule, or the rank
   *     is outside the world in force at that step
   */
  void checkShare(long step, int rank) {
    int worldSize = worldSizeAt(step);
    if (rank < 0 || rank >= worldSize) {
      throw new IllegalArgumentException(
          "rank "
              + rank
              + " out of range [0, "
              + worldSize
              + ") of the world size in force at step "
              + step);
    }
  }

  /**
   * Returns the indices of rank {@code rank} at step {@code step} taken from {@code order}, the
   * order of the step's epoch; the rank must have passed {@link #checkShare}.
   */
  long[] indices(long step, int rank, int[] order) {
    int share = globalBatch / worldSizeAt(step);
    return positions(step, rank * share, share, order);
  }

  /** Returns the order of {@code epoch}, computed unless cached; shared, never to be written. */
  int[] order(long epoch) {
    return Permutations.of(examples, seed, epoch);
  }

  /** Returns the order of {@code epoch} if it is cached, else null; never computes it. */
  int[] cachedOrder(long epoch) {
    return Permutations.cached(examples, seed, epoch);
  }

  private long[] positions(long step, int offset, int count, int[] order) {
    int start = (int) (step % stepsPerEpoch()) * globalBatch + offset;
    long[] indices = new long[count];
    for (int i = 0; i < count; i++) {
      indices[i] = order[start + i];
    }
    return indices;
  }

  private static void checkStep(long step) {
    if (step < 0) {
      throw new IllegalArgumentException("step " + step + " is negative; expected a step >= 0");
    }
  }
}
