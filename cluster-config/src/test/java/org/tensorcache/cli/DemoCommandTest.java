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
import org.tensorcache.model.data.PreferenceDataset;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.model.runner.ReferenceLogprobRunner;
import org.tensorcache.model.runner.RunnerOutput;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.export.CacheExport;
import org.tensorcache.store.spec.CacheSpec;
import picocli.CommandLine;

class DemoCommandTest {
  @TempDir Path dir;

  private DemoCommand demo(String... extra) {
    List<String> args = new ArrayList<>(List.of(extra));
    if (!args.contains("--examples")) {
      args.addAll(List.of("--examples", "300"));
    }
    args.addAll(List.of("--data-dir", dir.toString(), "--range-size", "64", "--micro-batch", "16"));
    args.addAll(List.of("--embed", "16", "--hidden", "24"));
    DemoCommand demo = new DemoCommand();
    assertEquals(0, new CommandLine(demo).execute(args.toArray(String[]::new)));
    return demo;
  }

  @Test
  void secondRunReusesTheCacheAndAChangedParameterMakesANewOne() {
    DemoCommand first = demo();
    assertEquals(300, first.lastResult.examplesComputed());
    DemoCommand second = demo();
    assertEquals(0, second.lastResult.examplesComputed());
    assertEquals(first.lastFingerprint, second.lastFingerprint);

    DemoCommand otherModel = demo("--model-seed", "8");
    assertEquals(300, otherModel.lastResult.examplesComputed());
    assertNotEquals(first.lastFingerprint.cacheId(), otherModel.lastFingerprint.cacheId());
    DemoCommand otherData = demo("--examples", "200");
    assertEquals(200, otherData.lastResult.examplesComputed());
    assertNotEquals(first.lastFingerprint.cacheId(), otherData.lastFingerprint.cacheId());
    assertEquals(3, countCacheDirs());
  }

  @Test
  void exportHoldsExactlyWhatTheRunnerComputes() throws Exception {
    DemoCommand run = demo();
    Path cacheDir = dir.resolve(run.lastFingerprint.cacheId());
    List<Block> blocks = exported(run, cacheDir);
    PreferenceDataset data =
        PreferenceDataset.load(dir.resolve("datasets/synthetic-s42-n300.jsonl"));
    try (TinyLm lm = TinyLm.load(dir.resolve("models/tinylm-e16-h24-l2-s7"))) {
      RunnerOutput expected = new ReferenceLogprobRunner(lm, 16, 512).run(data.examples());
      float[] value = new float[1];
      for (int row = 0; row < expected.size(); row++) {
        Block block = blocks.get((int) (row / 64));
        for (int f = 0; f < 2; f++) {
          block.copyValues(f, row, value, 0);
          assertArrayEquals(expected.value(f, row), value, "example " + row);
        }
      }
    }
  }

  @Test
  void corruptSegmentIsComputedAgainAndNothingElse() throws Exception {
    DemoCommand first = demo();
    Path cacheDir = dir.resolve(first.lastFingerprint.cacheId());
    byte[] before = Files.readAllBytes(cacheDir.resolve("export.safetensors"));
    Path segment = cacheDir.resolve("segments/range-000002.safetensors");
    try (FileChannel ch = FileChannel.open(segment, StandardOpenOption.WRITE)) {
      ch.truncate(Files.size(segment) - 3);
    }
    DemoCommand second = demo();
    assertEquals(64, second.lastResult.examplesComputed());
    assertEquals(4, second.lastResult.rangesReused());
    assertArrayEquals(before, Files.readAllBytes(cacheDir.resolve("export.safetensors")));
  }

  private static List<Block> exported(DemoCommand run, Path cacheDir) throws Exception {
    CacheSpec spec = run.lastResult.blocks().get(0).spec();
    return CacheExport.read(cacheDir.resolve("export.safetensors"), spec, run.lastFingerprint);
  }

  private long countCacheDirs() {
    try (var s = Files.list(dir)) {
      return s.filter(p -> p.getFileName().toString().startsWith("dpo-ref-")).count();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
