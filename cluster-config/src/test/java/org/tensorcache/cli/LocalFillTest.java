package org.tensorcache.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.model.batch.BatchPlanner;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.SyntheticPreferences;
import org.tensorcache.model.lm.LmConfig;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.model.runner.InvalidRunnerOutputException;
import org.tensorcache.model.runner.ReferenceLogprobRunner;
import org.tensorcache.model.text.ByteTokenizer;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.segment.SegmentStore;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;
import org.tensorcache.store.spec.FingerprintInputs;

class LocalFillTest {
  @TempDir Path dir;

  @Test
  void nanOutputStopsTheFillAndIsNeverStored() throws Exception {
    SyntheticPreferences.write(dir.resolve("d.jsonl"), 1, 100);
    ExampleSet data = ExampleSet.load(dir.resolve("d.jsonl"));
    try (TinyLm lm = TinyLm.create(new LmConfig(ByteTokenizer.VOCAB_SIZE, 8, 8, 2, 1))) {
      var parameters = lm.block().getParameters();
      parameters.valueAt(parameters.size() - 1).getArray().muli(Float.NaN);
      ReferenceLogprobRunner runner = new ReferenceLogprobRunner(lm, 10, 64);
      CacheSpec spec = new CacheSpec("nan", data.size(), runner.fields(), 50);
      Fingerprint fp =
          Fingerprint.of(
              new FingerprintInputs("r", "1", lm.weightsDigest(), data.digest(), Map.of(), spec));
      SegmentStore<Block> store = SegmentStore.open(dir.resolve("segments"), spec, fp);
      var fill =
          new LocalFill<>(new BlockRanges(runner, spec), data, spec, store, BatchPlanner.fixed(10));
      var e = assertThrows(InvalidRunnerOutputException.class, () -> fill.run(done -> {}));
      assertEquals(0, e.exampleIndex());
      assertTrue(store.persistedRanges().isEmpty(), "no segment may hold a NaN batch");
    }
  }
}
