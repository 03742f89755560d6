package org.tensorcache.model.train;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.PreferenceExample;
import org.tensorcache.model.data.SyntheticPreferences;
import org.tensorcache.model.lm.LmConfig;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.model.runner.ReferenceLogprobRunner;
import org.tensorcache.model.runner.RunnerOutput;
import org.tensorcache.model.text.ByteTokenizer;

class DpoTrainerTest {
  static final LmConfig CONFIG = new LmConfig(ByteTokenizer.VOCAB_SIZE, 16, 32, 2, 7);
  static final DpoConfig DPO = new DpoConfig(0.1f, 5e-3f, 128);
  static final int BATCH = 16;

  static ExampleSet dataset;
  static TinyLm reference;
  static ReferenceLogprobRunner runner;
  static ComputedReferenceLogprobs computed;

  @BeforeAll
  static void setUp(@TempDir Path dir) throws Exception {
    Path data = dir.resolve("d.jsonl");
    SyntheticPreferences.write(data, 5, 64);
    dataset = ExampleSet.load(data);
    reference = TinyLm.create(CONFIG);
    runner = new ReferenceLogprobRunner(reference, BATCH, DPO.maxSeqLen());
    computed = new ComputedReferenceLogprobs(runner, dataset);
  }

  @AfterAll
  static void tearDown() {
    runner.close();
  }

  /** The batch of step {@code step}: the data set in order, again and again. */
  static List<PreferenceExample> batch(int step) {
    int from = step * BATCH % dataset.size();
    return dataset.preferences().subList(from, from + BATCH);
  }

  static float[] train(DpoTrainer trainer, ReferenceLogprobs source, int steps) {
    float[] losses = new float[steps];
    for (int s = 0; s < steps; s++) {
      StepResult result = trainer.step(batch(s), source);
      assertEquals(s, result.step());
      losses[s] = result.loss();
    }
    return losses;
  }

  @Test
  void policyStartsAsTheReferenceSoTheFirstLossIsLog2() {
    try (DpoTrainer trainer = new DpoTrainer(reference, DPO)) {
      assertEquals(reference.weightsDigest(), trainer.policy().weightsDigest());
      StepResult first = trainer.step(batch(0), computed);
      assertEquals(Math.log(2), first.loss(), 1e-5);
      assertEquals(0, first.rewardMargin(), 1e-5);
    }
  }

  @Test
  void trainingLowersTheLossAndLeavesTheReferenceAlone() {
    RefLogprobs before = computed.lookup(new long[] {0, 1, 2});
    float[] losses;
    try (DpoTrainer trainer = new DpoTrainer(reference, DPO)) {
      losses = train(trainer, computed, 30);
      assertEquals(30, trainer.steps());
    }
    float first = (losses[0] + losses[1] + losses[2]) / 3;
    float last = (losses[27] + losses[28] + losses[29]) / 3;
    assertTrue(last < first - 0.01, "loss " + first + " -> " + last);
    RefLogprobs after = computed.lookup(new long[] {0, 1, 2});
    assertArrayEquals(before.chosen(), after.chosen());
    assertArrayEquals(before.rejected(), after.rejected());
  }

  @Test
  void sameInputsGiveTheSameLosses() {
    try (DpoTrainer a = new DpoTrainer(reference, DPO);
        DpoTrainer b = new DpoTrainer(reference, DPO)) {
      float[] first = train(a, computed, 6);
      float[] second = train(b, computed, 6);
      for (int s = 0; s < first.length; s++) {
        // threaded CPU kernels may round the last bit differently from run to run
        assertEquals(first[s], second[s], 1e-6, "step " + s);
      }
    }
  }

  @Test
  void cachedReferenceGivesTheSameLossesAsComputedOnes() {
    RunnerOutput all = runner.run(dataset.examples());
    float[] chosen = new float[all.size()];
    float[] rejected = new float[all.size()];
    for (int row = 0; row < all.size(); row++) {
      chosen[(int) all.index(row)] = all.value("chosen_logp", row)[0];
      rejected[(int) all.index(row)] = all.value("rejected_logp", row)[0];
    }
    ReferenceLogprobs cached = new ArrayReferenceLogprobs(chosen, rejected);
    try (DpoTrainer fromCache = new DpoTrainer(reference, DPO);
        DpoTrainer fromModel = new DpoTrainer(reference, DPO)) {
      float[] a = train(fromCache, cached, 8);
      float[] b = train(fromModel, computed, 8);
      for (int s = 0; s < a.length; s++) {
        assertEquals(b[s], a[s], 1e-6, "step " + s);
      }
    }
  }

  @Test
  void nativeMemoryOfThePolicyDoesNotGrowPerStep() {
    try (DpoTrainer trainer = new DpoTrainer(reference, DPO)) {
      train(trainer, computed, 2);
      int arrays = trainer.policy().manager().getManagedArrays().size();
      for (int s = 2; s < 6; s++) {
        trainer.step(batch(s), computed);
      }
      assertEquals(arrays, trainer.policy().manager().getManagedArrays().size());
    }
  }

  @Test
  void referenceOfAnotherLengthIsRefusedNamingBoth() {
    try (DpoTrainer trainer = new DpoTrainer(reference, DPO)) {
      RefLogprobs three = new RefLogprobs(new float[3], new float[3]);
      var e = assertThrows(IllegalArgumentException.class, () -> trainer.step(batch(0), three));
      assertEquals(
          "reference log-probs for 3 examples, but the batch has 16 examples", e.getMessage());
      assertEquals(0, trainer.steps());
    }
  }

  @Test
  void nanInTheReferenceIsRefusedNamingThePosition() {
    try (DpoTrainer trainer = new DpoTrainer(reference, DPO)) {
      List<PreferenceExample> batch = batch(1);
      RefLogprobs ref = computed.lookup(new long[] {16, 17, 18, 19});
      ref.rejected()[2] = Float.NaN;
      var e =
          assertThrows(
              IllegalArgumentException.class, () -> trainer.step(batch.subList(0, 4), ref));
      assertEquals(
          "reference rejected log-prob NaN at position 2 (example 18), expected a finite value",
          e.getMessage());
    }
  }

  @Test
  void refLogprobsOfTwoLengthsAreRefused() {
    var e =
        assertThrows(
            IllegalArgumentException.class, () -> new RefLogprobs(new float[2], new float[3]));
    assertEquals(
        "reference log-probs have 2 chosen and 3 rejected values, expected as many of each",
        e.getMessage());
  }

  @Test
  void lookupOutOfRangeIsNamed() {
    var cached = new ArrayReferenceLogprobs(new float[4], new float[4]);
    var e = assertThrows(IndexOutOfBoundsException.class, () -> cached.lookup(new long[] {1, 4}));
    assertEquals("index 4 out of range [0, 4) of the reference log-probs", e.getMessage());
  }
}
