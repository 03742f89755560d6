package org.tensorcache.model.runner;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.ParameterStore;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.model.data.PreferenceExample;
import org.tensorcache.model.data.SyntheticPreferences;
import org.tensorcache.model.lm.LmConfig;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.model.text.ByteTokenizer;

class ReferenceLogprobRunnerTest {
  static final LmConfig CONFIG = new LmConfig(ByteTokenizer.VOCAB_SIZE, 24, 32, 2, 11);
  static List<PreferenceExample> examples;
  static ReferenceLogprobRunner runner;

  @BeforeAll
  static void setUp(@TempDir Path dir) throws Exception {
    Path data = dir.resolve("d.jsonl");
    SyntheticPreferences.write(data, 3, 64);
    examples = org.tensorcache.model.data.ExampleSet.load(data).preferences();
    runner = new ReferenceLogprobRunner(TinyLm.create(CONFIG), 8, 128);
  }

  @AfterAll
  static void tearDown() {
    runner.close();
  }

  @Test
  void equalsNaivePerExampleLogSoftmax() {
    RunnerOutput out = runner.run(examples.subList(0, 20));
    for (int i = 0; i < 20; i++) {
      PreferenceExample e = examples.get(i);
      assertEquals(
          naive(e.prompt(), e.chosen()), out.value("chosen_logp", i)[0], 1e-5, e.toString());
      assertEquals(naive(e.prompt(), e.rejected()), out.value("rejected_logp", i)[0], 1e-5);
    }
  }

  /** One sequence, no batch and no padding; log-softmax written out in double. */
  private static double naive(String prompt, String response) {
    ByteTokenizer.Pair pair = ByteTokenizer.encodePair(prompt, response);
    int[] tokens = pair.tokens();
    int steps = tokens.length - 1;
    long[] input = new long[steps];
    for (int t = 0; t < steps; t++) {
      input[t] = tokens[t];
    }
    TinyLm lm = runner.lm;
    float[] logits;
    try (NDManager m = lm.manager().newSubManager()) {
      ParameterStore ps = new ParameterStore(m, false);
      NDArray hidden = lm.hidden(ps, m.create(input, new Shape(1, steps)), false);
      logits = lm.logits(ps, hidden, false).toFloatArray();
    }
    int v = CONFIG.vocabSize();
    double sum = 0;
    for (int t = pair.responseStart() - 1; t < steps; t++) {
      double max = Double.NEGATIVE_INFINITY;
      for (int k = 0; k < v; k++) {
        max = Math.max(max, logits[t * v + k]);
      }
      double z = 0;
      for (int k = 0; k < v; k++) {
        z += Math.exp(logits[t * v + k] - max);
      }
      sum += logits[t * v + tokens[t + 1]] - max - Math.log(z);
    }
    return sum;
  }

  @Test
  void sameExampleSameValueWhateverTheBatchAround() {
    RunnerOutput inOrder = runner.run(examples);
    List<PreferenceExample> shuffled = new ArrayList<>(examples);
    Collections.shuffle(shuffled, new Random(5));
    ReferenceLogprobRunner other = new ReferenceLogprobRunner(runner.lm, 5, 128);
    RunnerOutput mixed = other.run(shuffled);
    for (int row = 0; row < mixed.size(); row++) {
      int original = (int) mixed.index(row);
      assertEquals(inOrder.value(0, original)[0], mixed.value(0, row)[0], 1e-5);
      assertEquals(inOrder.value(1, original)[0], mixed.value(1, row)[0], 1e-5);
    }
    RunnerOutput alone = other.run(examples.subList(9, 10));
    assertEquals(inOrder.value(0, 9)[0], alone.value(0, 0)[0], 1e-5);
  }

  @Test
  void sameInputSameProcessIsBitIdentical() {
    RunnerOutput a = runner.run(examples);
    RunnerOutput b = runner.run(examples);
    for (int row = 0; row < a.size(); row++) {
      assertArrayEquals(a.row(row)[0], b.row(row)[0]);
      assertArrayEquals(a.row(row)[1], b.row(row)[1]);
    }
  }

  @Test
  void sameInputOnAnotherThreadIsBitIdentical() throws Exception {
    RunnerOutput here = runner.run(examples);
    var pool = java.util.concurrent.Executors.newSingleThreadExecutor();
    try {
      RunnerOutput there = pool.submit(() -> runner.run(examples)).get();
      for (int row = 0; row < here.size(); row++) {
        assertArrayEquals(here.row(row)[0], there.row(row)[0], "example " + row);
        assertArrayEquals(here.row(row)[1], there.row(row)[1], "example " + row);
      }
    } finally {
      pool.shutdown();
    }
  }

  @Test
  void chosenAndRejectedDiffer() {
    RunnerOutput out = runner.run(examples.subList(0, 4));
    assertNotEquals(out.value(0, 0)[0], out.value(1, 0)[0]);
    assertTrue(out.value(0, 0)[0] < 0);
  }

  @Test
  void saveThenLoadGivesIdenticalOutputs(@TempDir Path dir) throws Exception {
    runner.lm.save(dir);
    try (TinyLm loaded = TinyLm.load(dir)) {
      assertEquals(runner.lm.weightsDigest(), loaded.weightsDigest());
      assertEquals(TinyLm.sha256Of(dir.resolve("weights.params")), loaded.weightsDigest());
      RunnerOutput a = runner.run(examples);
      RunnerOutput b = new ReferenceLogprobRunner(loaded, 8, 128).run(examples);
      for (int row = 0; row < a.size(); row++) {
        assertArrayEquals(a.row(row)[0], b.row(row)[0]);
        assertArrayEquals(a.row(row)[1], b.row(row)[1]);
      }
    }
  }

  @Test
  void sameSeedSameWeightsOtherSeedOtherWeights() {
    try (TinyLm same = TinyLm.create(CONFIG);
        TinyLm other = TinyLm.create(new LmConfig(ByteTokenizer.VOCAB_SIZE, 24, 32, 2, 12))) {
      assertEquals(runner.lm.weightsDigest(), same.weightsDigest());
      assertNotEquals(runner.lm.weightsDigest(), other.weightsDigest());
    }
  }

  @Test
  void nanFromTheModelIsAnErrorNamingTheExample() {
    try (TinyLm broken = TinyLm.create(CONFIG)) {
      var parameters = broken.block().getParameters();
      parameters.valueAt(parameters.size() - 1).getArray().muli(Float.NaN);
      ReferenceLogprobRunner nanRunner = new ReferenceLogprobRunner(broken, 8, 128);
      var e =
          assertThrows(
              InvalidRunnerOutputException.class, () -> nanRunner.run(examples.subList(5, 9)));
      assertEquals(5, e.exampleIndex());
      assertEquals(
          "runner 'reference-logprob' returned NaN for field 'chosen_logp' of example 5 (element 0)",
          e.getMessage());
    }
  }

  @Test
  void tooLongExampleIsNamed() {
    PreferenceExample longOne = new PreferenceExample(77, "x".repeat(200), "a", "b");
    var e = assertThrows(IllegalArgumentException.class, () -> runner.run(List.of(longOne)));
    assertEquals("example 77 has 204 tokens, more than max_seq_len 128", e.getMessage());
  }
}
