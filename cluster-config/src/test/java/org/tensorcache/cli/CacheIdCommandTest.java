package org.tensorcache.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.launch.JobDefinitions;
import picocli.CommandLine;

/**
 * {@code cache-id}: one line, the id {@code fill} fills for the same options, nothing written; and
 * the range errors of the job options name their option.
 */
class CacheIdCommandTest {
  @TempDir Path dir;

  private List<String> job(String... more) {
    List<String> args = new ArrayList<>(List.of(more));
    args.addAll(List.of("--data-dir", dir.resolve("data").toString(), "--examples", "40"));
    args.addAll(List.of("--range-size", "16", "--embed", "8", "--hidden", "8"));
    return args;
  }

  private static List<String> command(String name, List<String> rest) {
    List<String> out = new ArrayList<>(List.of(name));
    out.addAll(rest);
    return out;
  }

  /** Runs the command line: exit code, stdout, stderr. */
  private static Run run(List<String> args) {
    StringWriter err = new StringWriter();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream stdout = System.out;
    int code;
    try (PrintStream capture = new PrintStream(out, true, StandardCharsets.UTF_8)) {
      System.setOut(capture);
      CommandLine cli = Main.commandLine().setErr(new PrintWriter(err));
      cli.setOut(new PrintWriter(capture, true));
      code = cli.execute(args.toArray(String[]::new));
    } finally {
      System.setOut(stdout);
    }
    return new Run(code, out.toString(StandardCharsets.UTF_8), err.toString());
  }

  private record Run(int code, String out, String err) {}

  private List<Path> files() throws Exception {
    try (Stream<Path> all = Files.walk(dir)) {
      return all.sorted().toList();
    }
  }

  @Test
  void printsOnlyTheIdFillFillsAndWritesNothing() throws Exception {
    Run fill = run(command("fill", command("--local", job("--micro-batch", "8"))));
    assertEquals(0, fill.code(), fill.err());
    String filled = JobDefinitions.definition(job().toArray(String[]::new)).cacheId();
    assertTrue(fill.out().contains(filled), "fill names the cache it fills: " + fill.out());

    List<Path> before = files();
    Run id = run(command("cache-id", job()));
    assertEquals(0, id.code(), id.err());
    assertEquals(filled + "\n", id.out());
    assertEquals(before, files(), "cache-id writes nothing");

    Run other = run(command("cache-id", job("--cache-name", "other")));
    assertTrue(other.out().startsWith("other-"), other.out());
    assertEquals(1, other.out().lines().count(), other.out());
  }

  @Test
  void refusesBeforeTheBuiltInModelIsMadeAndMakesNothing() {
    Run refused = run(command("cache-id", job()));
    assertEquals(1, refused.code());
    assertTrue(refused.err().startsWith("tensorcache cache-id: no data set "), refused.err());
    assertFalse(Files.exists(dir.resolve("data")));
  }

  @Test
  void helpMakesNothing() {
    Run help = run(command("cache-id", job("--help")));
    assertEquals(0, help.code(), help.err());
    assertTrue(help.out().contains("Usage: tensorcache cache-id"), help.out());
    assertFalse(help.out().contains("--micro-batch"), help.out());
    assertFalse(help.out().contains("--out"), help.out());
    assertFalse(Files.exists(dir.resolve("data")));
  }

  @Test
  void aValueOutOfRangeIsNamedByItsOption() {
    for (List<String> bad :
        List.of(
            List.of("--range-size", "0", "--range-size 0: expected 1..16777216"),
            List.of("--examples", "0", "--examples 0: expected >= 1"),
            List.of("--layers", "1", "--layers 1: expected 2..16"),
            List.of("--max-seq-len", "2", "--max-seq-len 2: expected >= 4"))) {
      List<String> args = job();
      int at = args.indexOf(bad.get(0)); // given once: a repeated option starts a new group
      if (at >= 0) {
        args.subList(at, at + 2).clear();
      }
      args.addAll(bad.subList(0, 2));
      Run refused = run(command("cache-id", args));
      assertEquals(1, refused.code());
      assertEquals("tensorcache cache-id: " + bad.get(2) + "\n", refused.err());
    }
    for (List<String> bad :
        List.of(
            List.of("--batch-tokens", "0", "--batch-tokens 0: expected >= 8"),
            List.of(
                "--memory-bound",
                "lots",
                "--memory-bound lots: expected a positive number of bytes or e.g. 512m, 2g"),
            List.of("--memory-bound", "512k", "--memory-bound 512k: expected at least 1m (1 MiB)"),
            List.of("--max-length", "1", "--max-length 1: expected 0 (no truncation) or >= 2"))) {
      List<String> args = job("--model-dir", "models/none", "--dataset", "none.jsonl");
      args.addAll(bad.subList(0, 2));
      Run refused = run(command("fill", command("--local", args)));
      assertEquals(1, refused.code());
      assertEquals("tensorcache fill: " + bad.get(2) + "\n", refused.err());
    }
    Run micro = run(command("fill", command("--local", job("--micro-batch", "0"))));
    assertEquals("tensorcache fill: --micro-batch 0: expected >= 1\n", micro.err());
    Run timeout = run(command("fill", job("--timeout", "0")));
    assertEquals("tensorcache fill: --timeout 0: expected >= 1\n", timeout.err());
  }
}
