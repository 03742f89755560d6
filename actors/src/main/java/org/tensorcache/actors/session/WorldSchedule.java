package org.tensorcache.actors.session;

import java.util.Arrays;
import org.tensorcache.store.serialization.KryoSerializable;

/**
 * The world sizes of a training run over its steps: entry {@code i} says that from global step
 * {@code fromSteps[i]} on, until the next entry, the run has {@code worldSizes[i]} ranks.
 *
 * <p>Immutable: the arrays are copied in and out.
 *
 * @param fromSteps the first step of each entry, strictly increasing, the first one {@code >= 0}
 * @param worldSizes the world size of each entry, each at least 1
 */
public record WorldSchedule(long[] fromSteps, int[] worldSizes) implements KryoSerializable {

  /** Checks the entries and copies the arrays. */
  public WorldSchedule {
    if (fromSteps.length == 0 || fromSteps.length != worldSizes.length) {
      throw new IllegalArgumentException(
          "a world schedule needs as many world sizes as start steps, at least one; got "
              + fromSteps.length
              + " steps and "
              + worldSizes.length
              + " world sizes");
    }
    fromSteps = fromSteps.clone();
    worldSizes = worldSizes.clone();
    for (int i = 0; i < fromSteps.length; i++) {
      long previous = i == 0 ? -1 : fromSteps[i - 1];
      if (fromSteps[i] <= previous) {
        throw new IllegalArgumentException(
            "start step "
                + fromSteps[i]
                + " of world schedule entry "
                + i
                + " must be greater than "
                + previous);
      }
      if (worldSizes[i] < 1) {
        throw new IllegalArgumentException(
            "world size " + worldSizes[i] + " from step " + fromSteps[i] + " must be at least 1");
      }
    }
  }

  /** Creates a schedule with one world size from {@code fromStep} on. */
  public static WorldSchedule of(long fromStep, int worldSize) {
    return new WorldSchedule(new long[] {fromStep}, new int[] {worldSize});
  }

  /** Returns the first step this schedule covers. */
  public long firstStep() {
    return fromSteps[0];
  }

  /**
   * Returns the world size in force at {@code step}.
   *
   * @throws IllegalArgumentException if the step precedes {@link #firstStep()}
   */
  public int worldSizeAt(long step) {
    int found = Arrays.binarySearch(fromSteps, step);
    int entry = found >= 0 ? found : -found - 2;
    if (entry < 0) {
      throw new IllegalArgumentException(
          "step " + step + " precedes step " + fromSteps[0] + ", the first of the world schedule");
    }
    return worldSizes[entry];
  }

  /**
   * Returns this schedule with {@code worldSize} in force from {@code fromStep} on: entries that
   * start at or after that step are dropped, since the run's future is being rewritten, and no
   * entry is added when the world size in force there is already {@code worldSize}. A step at or
   * before {@link #firstStep()} rewrites the whole schedule.
   */
  public WorldSchedule from(long fromStep, int worldSize) {
    int kept = 0;
    while (kept < fromSteps.length && fromSteps[kept] < fromStep) {
      kept++;
    }
    if (kept > 0 && worldSizes[kept - 1] == worldSize) {
      return new WorldSchedule(Arrays.copyOf(fromSteps, kept), Arrays.copyOf(worldSizes, kept));
    }
    long[] steps = Arrays.copyOf(fromSteps, kept + 1);
    int[] sizes = Arrays.copyOf(worldSizes, kept + 1);
    steps[kept] = fromStep;
    sizes[kept] = worldSize;
    return new WorldSchedule(steps, sizes);
  }

  @Override
  public long[] fromSteps() {
    return fromSteps.clone();
  }

  @Override
  public int[] worldSizes() {
    return worldSizes.clone();
  }

  @Override
  public boolean equals(Object other) {
    return other instanceof WorldSchedule that
        && Arrays.equals(fromSteps, that.fromSteps)
        && Arrays.equals(worldSizes, that.worldSizes);
  }

  @Override
  public int hashCode() {
    return 31 * Arrays.hashCode(fromSteps) + Arrays.hashCode(worldSizes);
  }

  @Override
  public String toString() {
    StringBuilder text = new StringBuilder("WorldSchedule[");
    for (int i = 0; i < fromSteps.length; i++) {
      text.append(i == 0 ? "" : ", ").append(fromSteps[i]).append(": ").append(worldSizes[i]);
    }
    return text.append(']').toString();
  }
}
