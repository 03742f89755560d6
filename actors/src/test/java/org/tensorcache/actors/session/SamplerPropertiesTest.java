package org.tensorcache.actors.session;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.List;
import java.util.stream.IntStream;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;
import net.jqwik.api.constraints.Size;

/** Laws of the sampler, over random runs and random changes of world size. */
class SamplerPropertiesTest {

  @Property(tries = 300)
  void everyPositionOfAnEpochIsServedOnceAcrossWorldSizeChanges(
      @ForAll @IntRange(min = 1, max = 3000) int examples,
      @ForAll @IntRange(min = 1, max = 3000) int batchPick,
      @ForAll long seed,
      @ForAll @IntRange(min = 0, max = 3) int epoch,
      @ForAll @Size(max = 6) List<@IntRange(min = 1, max = 400) Integer> changeSteps,
      @ForAll @Size(min = 7, max = 7) List<@IntRange(min = 0, max = 50) Integer> worldPicks) {
    int globalBatch = 1 + (batchPick - 1) % examples;
    int[] divisors = divisors(globalBatch);
    WorldSchedule schedule = WorldSchedule.of(0, divisors[worldPicks.get(0) % divisors.length]);
    for (int i = 0; i < changeSteps.size(); i++) {
      int worldSize = divisors[worldPicks.get(i + 1) % divisors.length];
      schedule = schedule.from(changeSteps.get(i), worldSize);
    }
    Sampler sampler = new Sampler(examples, seed, globalBatch, schedule);
    long stepsPerEpoch = sampler.stepsPerEpoch();

    BitSet seen = new BitSet(examples);
    List<Long> served = new ArrayList<>();
    for (long step = epoch * stepsPerEpoch; step < (epoch + 1) * stepsPerEpoch; step++) {
      int worldSize = sampler.worldSizeAt(step);
      for (int rank = 0; rank < worldSize; rank++) {
        for (long index : sampler.indices(step, rank)) {
          assertFalse(seen.get((int) index), "index " + index + " served twice");
          seen.set((int) index);
          served.add(index);
        }
      }
    }
    int[] order = Permutations.of(examples, seed, epoch);
    int expected = (int) (stepsPerEpoch * globalBatch);
    assertEquals(expected, served.size());
    for (int position = 0; position < expected; position++) {
      assertEquals(order[position], served.get(position), "position " + position);
    }
  }

  @Property(tries = 200)
  void sameConfigurationGivesTheSameIndices(
      @ForAll @IntRange(min = 1, max = 5000) int examples,
      @ForAll long seed,
      @ForAll @LongRange(min = 0, max = 10_000) long step) {
    int globalBatch = Math.max(1, examples / 7);
    Sampler sampler = Sampler.of(examples, seed, globalBatch, 1);
    long epoch = sampler.epochOf(step);
    // recomputed from scratch, not from the shared cache
    int[] order = Permutations.shuffle(examples, Permutations.epochSeed(seed, epoch));
    long start = (step % sampler.stepsPerEpoch()) * globalBatch;
    long[] expected = new long[globalBatch];
    for (int i = 0; i < globalBatch; i++) {
      expected[i] = order[(int) start + i];
    }
    assertArrayEquals(expected, Sampler.of(examples, seed, globalBatch, 1).indices(step, 0));
  }

  @Property(tries = 200)
  void differentSeedOrEpochGivesADifferentOrder(
      @ForAll @IntRange(min = 20, max = 5000) int examples,
      @ForAll long seed,
      @ForAll @IntRange(min = 1, max = 1000) int otherSeedDelta,
      @ForAll @IntRange(min = 0, max = 100) int epoch) {
    int[] order = Permutations.shuffle(examples, Permutations.epochSeed(seed, epoch));
    int[] otherSeed =
        Permutations.shuffle(examples, Permutations.epochSeed(seed + otherSeedDelta, epoch));
    int[] nextEpoch = Permutations.shuffle(examples, Permutations.epochSeed(seed, epoch + 1));
    assertFalse(Arrays.equals(order, otherSeed));
    assertFalse(Arrays.equals(order, nextEpoch));
    int[] sorted = order.clone();
    Arrays.sort(sorted);
    for (int i = 0; i < examples; i++) {
      assertEquals(i, sorted[i]);
    }
  }

  @Property(tries = 100)
  void worldSizeAtFollowsTheLastChangeAtOrBeforeTheStep(
      @ForAll @Size(max = 8) List<@IntRange(min = 0, max = 100) Integer> changeSteps,
      @ForAll @IntRange(min = 0, max = 120) int step) {
    WorldSchedule schedule = WorldSchedule.of(0, 1);
    for (int i = 0; i < changeSteps.size(); i++) {
      schedule = schedule.from(changeSteps.get(i), i + 2);
    }
    // replay the rewrites by hand: a change at s discards all later ones
    int[] sizeAt = new int[121];
    Arrays.fill(sizeAt, 1);
    for (int i = 0; i < changeSteps.size(); i++) {
      Arrays.fill(sizeAt, changeSteps.get(i), sizeAt.length, i + 2);
    }
    assertEquals(sizeAt[step], schedule.worldSizeAt(step));
    assertTrue(schedule.fromSteps().length <= changeSteps.size() + 1);
  }

  private static int[] divisors(int value) {
    return IntStream.rangeClosed(1, value).filter(d -> value % d == 0).toArray();
  }
}
