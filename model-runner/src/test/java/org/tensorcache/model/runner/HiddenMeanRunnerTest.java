package org.tensorcache.model.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.PreferenceExample;
import org.tensorcache.model.data.SyntheticPreferences;
import org.tensorcache.model.lm.TinyLm;

class HiddenMeanRunnerTest {
  @Test
  void givesOneVectorOfHiddenSizePerExampleIndependentOfBatch(@TempDir Path dir) throws Exception {
    SyntheticPreferences.write(dir.resolve("d.jsonl"), 9, 30);
    List<PreferenceExample> examples = ExampleSet.load(dir.resolve("d.jsonl")).preferences();
    try (HiddenMeanRunner runner =
        new HiddenMeanRunner(TinyLm.create(ReferenceLogprobRunnerTest.CONFIG), 7, 128)) {
      assertEquals(List.of(FieldSpec.vector("chosen_hidden_mean", 32)), runner.fields());
      RunnerOutput all = runner.run(examples);
      RunnerOutput one = runner.run(examples.subList(12, 13));
      assertEquals(32, all.value(0, 12).length);
      for (int k = 0; k < 32; k++) {
        assertEquals(all.value(0, 12)[k], one.value(0, 0)[k], 1e-5);
      }
    }
  }
}
