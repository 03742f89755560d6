package org.tensorcache.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.PreferenceExample;
import org.tensorcache.model.data.SyntheticPreferences;
import org.tensorcache.model.lm.LmConfig;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.model.runner.ReferenceLogprobRunner;
import org.tensorcache.model.text.ByteTokenizer;

/** Examples per second of the reference runner at the demo's model size, per micro-batch size. */
final class RunnerBench {
  private static final int[] MICRO_BATCHES = {1, 8, 32, 64, 128, 256};

  private RunnerBench() {}

  static List<Map<String, Object>> run(Path work, RunSize size) throws Exception {
    Path file = work.resolve("runner-data.jsonl");
    SyntheticPreferences.write(file, 42, size.pick(4096, 4096, 512));
    List<PreferenceExample> examples = ExampleSet.load(file).preferences();
    LmConfig config = new LmConfig(ByteTokenizer.VOCAB_SIZE, 64, 128, 2, 7);
    int repeats = size.pick(3, 1, 1);
    List<Map<String, Object>> rows = new ArrayList<>();
    System.out.printf("%12s %10s %14s%n", "micro_batch", "examples", "examples/s");
    try (TinyLm lm = TinyLm.create(config)) {
      for (int mb : MICRO_BATCHES) {
        // a micro-batch of 1 is slow: fewer examples keep each figure near a few seconds
        int count = mb == 1 ? 256 : mb < 32 ? 1024 : 4096;
        count = size.pick(count, count / 4, Math.max(8, mb)); // smoke: one micro-batch
        List<PreferenceExample> batch = examples.subList(0, count);
        ReferenceLogprobRunner runner = new ReferenceLogprobRunner(lm, mb, 512);
        runner.run(batch.subList(0, Math.min(count, 4 * mb))); // warm-up
        double[] rates = new double[repeats];
        for (int r = 0; r < repeats; r++) {
          long t0 = System.nanoTime();
          runner.run(batch);
          rates[r] = count / ((System.nanoTime() - t0) / 1e9);
        }
        Arrays.sort(rates);
        double median = rates[repeats / 2];
        System.out.printf("%12d %10d %14.0f%n", mb, count, median);
        Map<String, Object> row = new LinkedHashMap<>();
        row.put("micro_batch", mb);
        row.put("examples", count);
        row.put("repeats", repeats);
        row.put("examples_per_s_median", Math.round(median));
        row.put("examples_per_s_min", Math.round(rates[0]));
        row.put("examples_per_s_max", Math.round(rates[repeats - 1]));
        rows.add(row);
      }
    }
    Files.deleteIfExists(file);
    return rows;
  }
}
