package org.tensorcache.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.launch.Job;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.model.runner.ReferenceLogprobRunner;
import org.tensorcache.model.runner.RunnerOutput;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.export.CacheExport;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;
import picocli.CommandLine;

/** The demo on the embedded cluster, small: fill, reuse, invalidation, repair, trainer resume. */
class DemoCommandTest {
  @TempDir Path dir;

  private DemoCommand demo(String... extra) {
    List<String> args = new ArrayList<>(List.of(extra));
    args.addAll(List.of("--data-dir", dir.toString(), "--examples", "300", "--range-size", "64"));
    args.addAll(List.of("--micro-batch", "16", "--embed", "16", "--hidden", "24"));
    args.addAll(List.of("--dpo-steps", "8", "--preempt-at", "5", "--checkpoint-every", "2"));
    args.addAll(List.of("--batch-size", "8"));
    DemoCommand demo = new DemoCommand();
    assertEquals(0, new CommandLine(demo).execute(args.toArray(String[]::new)));
    return demo;
  }

  private Fingerprint fingerprintOf(DemoCommand run) throws Exception {
    return run.job.prepare(run.compute).fingerprint();
  }

  @Test
  void fillsThenReusesTheCacheAndAChangedParameterMakesANewOne() throws Exception {
    DemoCommand first = demo();
    assertEquals(300, first.report.computed);
    assertEquals(0, first.report.mismatches);
    assertEquals(4, first.report.resumedAt, "the trainer replays step 4 after its restart");
    DemoCommand second = demo();
    assertEquals(0, second.report.computed, "a second run must reuse every persisted range");
    assertEquals(fingerprintOf(first), fingerprintOf(second));

    DemoCommand otherModel = demo("--model-seed", "8");
    assertEquals(300, otherModel.report.computed);
    assertNotEquals(fingerprintOf(first).cacheId(), fingerprintOf(otherModel).cacheId());
  }

  @Test
  void exportHoldsExactlyWhatOneProcessComputesAndACorruptSegmentIsComputedAgain()
      throws Exception {
    DemoCommand run = demo();
    Job job = run.job.prepare(run.compute);
    Path export = job.cacheDir().resolve("export.safetensors");
    List<Block> blocks = CacheExport.read(export, job.spec(), job.fingerprint());
    assertEquals(referenceValues(job.spec()), values(blocks, job.spec()));

    byte[] before = Files.readAllBytes(export);
    Path segment = job.definition().segmentDir().resolve("range-000002.safetensors");
    try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.WRITE)) {
      ch.truncate(Files.size(segment) - 3);
    }
    DemoCommand repaired = demo();
    assertEquals(64, repaired.report.computed, "only the corrupt range is computed again");
    assertArrayEquals(before, Files.readAllBytes(export));
  }

  /** Every value as one process computes it, micro-batch by aligned micro-batch of 16. */
  private List<Float> referenceValues(CacheSpec spec) throws Exception {
    ExampleSet data = ExampleSet.load(dir.resolve("datasets/synthetic-s42-n300.jsonl"));
    List<Float> values = new ArrayList<>();
    try (TinyLm lm = TinyLm.load(dir.resolve("models/tinylm-e16-h24-l2-s7"));
        ReferenceLogprobRunner runner = new ReferenceLogprobRunner(lm, 16, 512)) {
      float[][] all = new float[2][(int) spec.n()];
      for (long from = 0; from < spec.n(); from += 16) {
        RunnerOutput out = runner.run(data.slice(from, Math.min(spec.n(), from + 16)));
        for (int row = 0; row < out.size(); row++) {
          all[0][(int) out.index(row)] = out.value(0, row)[0];
          all[1][(int) out.index(row)] = out.value(1, row)[0];
        }
      }
      for (float[] field : all) {
        for (float v : field) {
          values.add(v);
        }
      }
    }
    return values;
  }

  private static List<Float> values(List<Block> blocks, CacheSpec spec) {
    List<Float> values = new ArrayList<>();
    float[] one = new float[1];
    for (int f = 0; f < 2; f++) {
      for (long i = 0; i < spec.n(); i++) {
        blocks.get(spec.rangeOf(i)).copyValues(f, i, one, 0);
        values.add(one[0]);
      }
    }
    return values;
  }
}
