package org.tensorcache.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.tensorcache.bench.fixture.Rounds;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.report.Table;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.PreferenceExample;
import org.tensorcache.model.data.SyntheticPreferences;
import org.tensorcache.model.lm.LmConfig;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.model.runner.ReferenceLogprobRunner;
import org.tensorcache.model.text.ByteTokenizer;

/** Examples per second of the reference runner at the demo's model size, per micro-batch size. */
final class RunnerBench {
  static final LmConfig DEMO_MODEL = new LmConfig(ByteTokenizer.VOCAB_SIZE, 64, 128, 2, 7);

  private RunnerBench() {}

  static List<Map<String, Object>> run(Path work, RunSize size) throws Exception {
    Path file = work.resolve("runner-data.jsonl");
    SyntheticPreferences.write(file, 42, size.pick(4096, 4096, 512));
    List<PreferenceExample> examples = ExampleSet.load(file).preferences();
    int repeats = size.pick(3, 1, 1);
    Table table =
        new Table(null)
            .col("micro_batch", "%12d")
            .col("examples", "%10d")
            .json("repeats")
            .col("examples_per_s_median", "examples/s", "%14d")
            .json("examples_per_s_min")
            .json("examples_per_s_max");
    try (TinyLm lm = TinyLm.create(DEMO_MODEL)) {
      for (int mb : new int[] {1, 8, 32, 64, 128, 256}) {
        // a micro-batch of 1 is slow: fewer examples keep each figure near a few seconds
        int count = mb == 1 ? 256 : mb < 32 ? 1024 : 4096;
        int n = size.pick(count, count / 4, Math.max(8, mb)); // smoke: one micro-batch
        List<PreferenceExample> batch = examples.subList(0, n);
        ReferenceLogprobRunner runner = new ReferenceLogprobRunner(lm, mb, 512);
        runner.run(batch.subList(0, Math.min(n, 4 * mb))); // warm-up
        Rounds t =
            Rounds.time(0, 0, repeats, 1, Rounds.NOTHING, Rounds.NOTHING, i -> runner.run(batch));
        table.row(
            mb,
            n,
            repeats,
            Math.round(n / (t.at(0, 0.5) / 1e9)),
            Math.round(n / (t.at(0, 1) / 1e9)),
            Math.round(n / (t.at(0, 0) / 1e9)));
      }
    }
    Files.deleteIfExists(file);
    return table.print();
  }
}
