package org.tensorcache.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.launch.JobDefinitions;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.export.CacheExport;
import org.tensorcache.store.segment.SegmentStore;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.testing.S3ProxyServer;
import picocli.CommandLine;

/**
 * {@code export}: the segments a local fill persisted, written as one file with the inputs; refused
 * while a range is not filled, writing nothing.
 */
class ExportCommandTest {
  @TempDir Path dir;

  /** The options that identify a small built-in cache: 200 examples in ranges of 64. */
  private String[] job(String... more) {
    List<String> args = new ArrayList<>(List.of(more));
    args.addAll(List.of("--data-dir", dir.resolve("data").toString(), "--examples", "200"));
    args.addAll(List.of("--range-size", "64", "--embed", "8", "--hidden", "8"));
    return args.toArray(String[]::new);
  }

  /** {@code fill --local} of the job, computing 16 examples per pass. */
  private String[] fill() {
    return command("fill", command("--local", command("--micro-batch", command("16", job()))));
  }

  private static String[] command(String name, String[] rest) {
    String[] out = new String[rest.length + 1];
    out[0] = name;
    System.arraycopy(rest, 0, out, 1, rest.length);
    return out;
  }

  /** Runs the command line, returning its exit code, stdout and stderr. */
  private static Run run(String... args) {
    StringWriter err = new StringWriter();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream stdout = System.out;
    int code;
    try (PrintStream capture = new PrintStream(out, true, StandardCharsets.UTF_8)) {
      System.setOut(capture);
      CommandLine cli = Main.commandLine().setErr(new PrintWriter(err));
      cli.setOut(new PrintWriter(capture, true));
      code = cli.execute(args);
    } finally {
      System.setOut(stdout);
    }
    return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString());
  }

  private record Run(int code, String out, String err) {}

  private CacheDefinition filled() throws Exception {
    Run fill = run(fill());
    assertEquals(0, fill.code(), fill.err());
    return JobDefinitions.definition(job());
  }

  @Test
  void exportsEverySegmentWithTheInputs() throws Exception {
    CacheDefinition d = filled();
    Run export = run(command("export", job()));
    assertEquals(0, export.code(), export.err());
    assertEquals(
        1, export.out().lines().count(), "nothing loaded, nothing to say: " + export.out());
    Path file = dir.resolve("data").resolve(d.cacheId()).resolve("export.safetensors");
    assertTrue(
        export.out().contains(file.toString() + ": 200 examples, 2 fields, " + Files.size(file)),
        export.out());

    SegmentStore<Block> store = SegmentStore.open(d.segmentDir(), d.spec(), d.fingerprint());
    List<Block> back = CacheExport.read(file, d.spec(), d.fingerprint());
    assertEquals(4, back.size());
    for (int r = 0; r < 4; r++) {
      assertEquals(store.read(r).orElseThrow(), back.get(r), "range " + r);
      assertTrue(back.get(r).isComplete());
    }
    assertEquals(d.inputs(), CacheExport.inputs(file));
    assertEquals("builtin", CacheExport.inputs(file).get("runner_kind"));

    Path out = dir.resolve("elsewhere/dpo.safetensors");
    assertEquals(0, run(command("export", job("--out", out.toString()))).code());
    assertEquals(back, CacheExport.read(out, d.spec(), d.fingerprint()));
  }

  @Test
  void refusesNamingTheRangesNotFilledAndWritesNothing() throws Exception {
    CacheDefinition d = filled();
    Files.delete(d.segmentDir().resolve(SegmentStore.fileName(0)));
    Path corrupt = d.segmentDir().resolve(SegmentStore.fileName(2));
    try (FileChannel ch = FileChannel.open(corrupt, StandardOpenOption.WRITE)) {
      ch.truncate(Files.size(corrupt) - 3);
    }
    Files.delete(d.segmentDir().resolve(SegmentStore.fileName(3)));
    Path manifest = dir.resolve("data").resolve(d.cacheId()).resolve("cache.json");
    Files.delete(manifest);
    Path out = dir.resolve("out.safetensors");

    Run refused = run(command("export", job("--out", out.toString())));
    assertEquals(1, refused.code());
    assertTrue(
        refused
            .err()
            .startsWith(
                "tensorcache export: ranges 0, 2-3 of 4 (examples 0-63, 128-199) are not filled:"
                    + " run ./tensorcache fill with the same job options first (a segment was"
                    + " rejected: "),
        refused.err());
    assertFalse(Files.exists(out), "a refused export writes nothing");
    assertEquals(1, run(command("export", job())).code(), "refused at the default place too");
    assertFalse(
        Files.exists(dir.resolve("data").resolve(d.cacheId()).resolve("export.safetensors")));
    assertFalse(Files.exists(manifest), "a refused export writes no cache.json");

    assertEquals(0, run(fill()).code());
    assertEquals(0, run(command("export", job("--out", out.toString()))).code());
    assertEquals(4, CacheExport.read(out, d.spec(), d.fingerprint()).size());
  }

  @Test
  void aSingleRangeIsNamedAsOne() {
    CacheSpec spec = new CacheSpec("c", 12 * 1024, List.of(FieldSpec.scalar("x")), 1024);
    assertEquals(
        "range 3 of 12 (examples 3072-4095) is not filled",
        SegmentExport.notFilled(spec, List.of(3)));
    assertEquals(
        "ranges 3-5, 9 of 12 (examples 3072-6143, 9216-10239) are not filled",
        SegmentExport.notFilled(spec, List.of(3, 4, 5, 9)));
  }

  @Test
  void anExportFromObjectStorageFetchesIntoATemporaryDirectoryAndKeepsNothing() throws Exception {
    try (S3ProxyServer s3 = S3ProxyServer.start(dir.resolve("s3"))) {
      S3ProxyServer.useAsDefaultCredentials();
      s3.createBucket("caches");
      String[] place = {
        "--segments", "s3://caches/runs", "--s3-endpoint", s3.endpoint().toString()
      };
      Run fill =
          run(
              command(
                  "fill", command("--local", command("--micro-batch", command("16", job(place))))));
      assertEquals(0, fill.code(), fill.err());
      CacheDefinition d = JobDefinitions.definition(job(place));
      Path cacheDir = dir.resolve("data").resolve(d.cacheId());
      deleteTree(cacheDir); // the manifest and the fill's verified copies
      Path out = dir.resolve("from-s3.safetensors");
      Run export = run(command("export", job(concat(place, "--out", out.toString()))));
      assertEquals(0, export.code(), export.err());
      assertEquals(4, CacheExport.read(out, d.spec(), d.fingerprint()).size());
      assertFalse(Files.exists(cacheDir), "the export keeps no copies and writes no manifest");
    }
  }

  private static String[] concat(String[] first, String... more) {
    List<String> all = new ArrayList<>(List.of(first));
    all.addAll(List.of(more));
    return all.toArray(String[]::new);
  }

  private static void deleteTree(Path root) throws Exception {
    try (var paths = Files.walk(root)) {
      for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  @Test
  void anExportOfWhatWasNeverFilledIsRefusedAndMakesNothing() {
    Run refused = run(command("export", job()));
    assertEquals(1, refused.code());
    assertEquals(
        "tensorcache export: no data set "
            + dir.resolve("data/datasets/synthetic-s42-n200.jsonl")
            + ": expected the synthetic one fill, node or demo makes on first use with these"
            + " options\n",
        refused.err());
    assertEquals("", refused.out());
    assertFalse(Files.exists(dir.resolve("data")), "a refused export makes nothing");
  }

  @Test
  void computeOptionsAreNotExports() {
    Run refused = run(command("export", command("--micro-batch", command("16", job()))));
    assertEquals(2, refused.code());
    assertTrue(refused.err().contains("Unknown options: '--micro-batch', '16'"), refused.err());
  }

  @Test
  void helpListsWhatIdentifiesTheCacheAndMakesNothing() {
    Run help = run(command("export", job("--help")));
    assertEquals(0, help.code(), help.err());
    assertTrue(help.out().contains("Usage: tensorcache export"), help.out());
    for (String option : List.of("--out=FILE", "--dataset=FILE", "--model-dir=DIR", "--segments")) {
      assertTrue(help.out().contains(option), option + " in " + help.out());
    }
    assertFalse(help.out().contains("--micro-batch"), help.out());
    assertFalse(help.out().contains("Computing:"), help.out());
    assertFalse(Files.exists(dir.resolve("data")), "help must make no data set, model or cache");
  }
}
