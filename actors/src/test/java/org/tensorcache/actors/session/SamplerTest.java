package org.tensorcache.actors.session;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Arrays;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

class SamplerTest {

  @Test
  void epochOrderIsFixedByTheAlgorithmNotByTheJdk() {
    // a change of these orders breaks the resumption of every run recorded before it; they were
    // computed by an independent implementation of SplitMix64 with Lemire's bounded draws
    assertArrayEquals(
        new int[] {8, 2, 1, 5, 7, 6, 4, 9, 3, 0},
        Permutations.shuffle(10, Permutations.epochSeed(42, 0)));
    assertArrayEquals(
        new int[] {9, 6, 8, 4, 0, 2, 7, 3, 1, 5},
        Permutations.shuffle(10, Permutations.epochSeed(42, 1)));
  }

  @Test
  void lastPartialBatchOfAnEpochIsDropped() {
    Sampler sampler = Sampler.of(10, 7, 4, 2);
    assertEquals(2, sampler.stepsPerEpoch());
    assertEquals(0, sampler.epochOf(1));
    assertEquals(1, sampler.epochOf(2));
    int[] epoch1 = Permutations.of(10, 7, 1);
    assertArrayEquals(new long[] {epoch1[0], epoch1[1], epoch1[2], epoch1[3]}, sampler.batch(2));
  }

  @Test
  void ranksTakeConsecutiveSlicesOfTheGlobalBatch() {
    Sampler sampler = Sampler.of(1000, 3, 64, 4);
    long step = 20;
    long[] global = sampler.batch(step);
    long[] joined =
        LongStream.range(0, 4)
            .flatMap(rank -> Arrays.stream(sampler.indices(step, (int) rank)))
            .toArray();
    assertArrayEquals(global, joined);
    assertEquals(16, sampler.indices(step, 3).length);
    assertArrayEquals(Arrays.copyOfRange(global, 16, 32), sampler.indices(step, 1));
  }

  @Test
  void worldSizeInForceDecidesTheSlicing() {
    WorldSchedule schedule = WorldSchedule.of(0, 4).from(5, 2);
    Sampler sampler = new Sampler(1000, 3, 64, schedule);
    assertEquals(4, sampler.worldSizeAt(4));
    assertEquals(2, sampler.worldSizeAt(5));
    assertEquals(16, sampler.indices(4, 3).length);
    assertEquals(32, sampler.indices(5, 1).length);
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> sampler.indices(5, 2));
    assertEquals("rank 2 out of range [0, 2) of the world size in force at step 5", e.getMessage());
  }

  @Test
  void badConfigurationIsRejectedWithTheValueAndWhatWasExpected() {
    assertMessage("world size 3 does not divide global batch 64", () -> Sampler.of(1000, 1, 64, 3));
    assertMessage("world size 0 must be at least 1", () -> Sampler.checkWorldSize(64, 0));
    assertMessage(
        "global batch 64 out of range [1, 10] for 10 examples", () -> Sampler.of(10, 1, 64, 1));
    assertMessage(
        "number of examples 0 out of range [1, 2147483639]", () -> Sampler.of(0, 1, 1, 1));
    assertMessage(
        "step -1 is negative; expected a step >= 0", () -> Sampler.of(10, 1, 2, 1).batch(-1));
    assertMessage(
        "step 2 precedes step 3, the first of the world schedule",
        () -> new Sampler(10, 1, 2, WorldSchedule.of(3, 1)).indices(2, 0));
  }

  @Test
  void scheduleChangeDropsTheEntriesItRewrites() {
    WorldSchedule schedule = WorldSchedule.of(0, 4).from(10, 2).from(20, 8);
    assertEquals("WorldSchedule[0: 4, 10: 2, 20: 8]", schedule.toString());
    assertEquals(WorldSchedule.of(0, 4).from(10, 2).from(15, 1), schedule.from(15, 1));
    assertEquals(WorldSchedule.of(0, 4), schedule.from(10, 4));
    assertEquals(schedule, schedule.from(20, 8));
    assertEquals(WorldSchedule.of(0, 6), schedule.from(0, 6));
    assertEquals(WorldSchedule.of(4, 2), WorldSchedule.of(5, 1).from(10, 3).from(4, 2));
  }

  @Test
  void epochOrderIsComputedOncePerEpoch() {
    assertSame(Permutations.of(2_000_000, 11, 0), Permutations.of(2_000_000, 11, 0));
    int[] order = Permutations.of(2_000_000, 11, 0).clone();
    Arrays.sort(order);
    for (int i = 0; i < order.length; i++) {
      assertEquals(i, order[i]);
    }
  }

  private static void assertMessage(String expected, Runnable call) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call::run);
    assertEquals(expected, e.getMessage());
  }
}
