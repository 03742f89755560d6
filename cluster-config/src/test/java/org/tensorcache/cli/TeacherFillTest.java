package org.tensorcache.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A distillation teacher's cache through the command line: {@code fill --local --runner topk}
 * stores, for every completion token, the top-K ids and log-probs that PyTorch computes for the
 * same model and rows, the export holds them with each example's offsets, a second fill reuses
 * every segment and another directory gets the same bytes; bad options store nothing.
 */
class TeacherFillTest {
  private static final Path BYO = Path.of("../model-runner/src/test/resources/byo");

  @TempDir Path dir;

  /** The fixture's case gpt2-split-completion: top-5 at temperature 0.7, no truncation. */
  private String[] job(Path data, String... more) {
    List<String> args =
        new ArrayList<>(
            List.of(
                "--data-dir", data.toString(),
                "--model-dir", BYO.resolve("gpt2-split").toString(),
                "--dataset", BYO.resolve("data/completion.jsonl").toString(),
                "--runner", "topk",
                "--top-k", "5",
                "--temperature", "0.7",
                "--max-length", "0",
                "--range-size", "5"));
    args.addAll(List.of(more));
    return args.toArray(String[]::new);
  }

  private static int run(String command, String... args) {
    String[] all = new String[args.length + 1];
    all[0] = command;
    System.arraycopy(args, 0, all, 1, args.length);
    return Main.commandLine().execute(all);
  }

  @Test
  void theExportHoldsPyTorchsTopKForEveryCompletionToken() throws IOException {
    String[] job = job(dir.resolve("data"), "--exact");
    assertEquals(0, run("fill", concat("--local", job)));
    Path file = dir.resolve("teacher.safetensors");
    assertEquals(0, run("export", concat(job, "--out", file.toString())));
    Export e = Export.read(file);

    JsonNode expected = null;
    for (JsonNode c :
        new ObjectMapper().readTree(BYO.resolve("expected-topk.json").toFile()).get("cases")) {
      if (c.get("name").asText().equals("gpt2-split-completion")) {
        expected = c;
      }
    }
    assertTrue(expected != null, "the fixture's case");
    int checked = 0;
    for (JsonNode row : expected.get("rows")) {
      int i = row.get("index").asInt();
      int tokens = row.get("targets").size();
      assertEquals(tokens, e.offsets[i + 1] - e.offsets[i], "tokens of row " + i);
      for (int t = 0; t < tokens; t++) {
        long at = e.offsets[i] + t;
        Map<Integer, Float> stored = new TreeMap<>();
        for (int j = 1; j < 5; j++) { // the teacher's order: log-prob descending
          float before = e.logps.getFloat((int) (4 * (at * 5 + j - 1)));
          assertTrue(before >= e.logps.getFloat((int) (4 * (at * 5 + j))), "row " + i);
        }
        for (int j = 0; j < 5; j++) {
          stored.put(
              e.ids.getInt((int) (4 * (at * 5 + j))), e.logps.getFloat((int) (4 * (at * 5 + j))));
        }
        for (int j = 0; j < 5; j++) {
          int id = row.get("ids").get(t).get(j).asInt();
          assertTrue(stored.containsKey(id), "row " + i + " token " + t + ": id " + id);
          assertEquals(row.get("logps").get(t).get(j).asDouble(), stored.get(id), 2e-5);
        }
        assertEquals(row.get("tails").get(t).asDouble(), e.tails.getFloat((int) (4 * at)), 2e-5);
        checked++;
      }
    }
    assertEquals(e.offsets[12], checked, "every stored token was checked");
  }

  @Test
  void aSecondFillReusesEverySegmentAndAnotherDirectoryGetsTheSameBytes() throws IOException {
    Path a = dir.resolve("a");
    Path b = dir.resolve("b");
    assertEquals(0, run("fill", concat("--local", job(a))));
    List<Path> first = segments(a);
    List<byte[]> bytes = new ArrayList<>();
    for (Path p : first) {
      bytes.add(Files.readAllBytes(p));
    }
    assertEquals(3, first.size());
    PrintStream out = System.out;
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
    try {
      assertEquals(0, run("fill", concat("--local", job(a))));
    } finally {
      System.setOut(out);
    }
    assertTrue(printed.toString(StandardCharsets.UTF_8).contains("(3 reused); 0 computed"));
    assertEquals(0, run("fill", concat("--local", job(b))));
    List<Path> second = segments(b);
    for (int r = 0; r < 3; r++) {
      assertArrayEquals(bytes.get(r), Files.readAllBytes(second.get(r)), "range " + r);
    }
  }

  @Test
  void badOptionsOrAnEditedDataSetStoreNothingOrMakeAnotherCache() throws IOException {
    Path data = dir.resolve("bad");
    for (String[] bad :
        List.of(
            job(data, "--top-k", "0"),
            job(data, "--top-k", "801"),
            job(data, "--temperature", "0"),
            job(data, "--temperature", "-1"))) {
      assertNotEquals(0, run("fill", concat("--local", bad)), String.join(" ", bad));
    }
    assertNotEquals(0, run("fill", job(data))); // nodes do not compute per-token caches yet
    assertFalse(Files.exists(data) && !segmentsOrNone(data).isEmpty(), "nothing stored");

    Path edited = dir.resolve("edited.jsonl");
    List<String> lines = Files.readAllLines(BYO.resolve("data/completion.jsonl"));
    String changed = lines.get(3).replaceFirst("\"completion\": *\"", "$0x");
    assertNotEquals(lines.get(3), changed);
    lines.set(3, changed);
    Files.write(edited, lines);
    String[] editedJob = job(data);
    editedJob[5] = edited.toString(); // the value of --dataset
    assertNotEquals(cacheId(job(data)), cacheId(editedJob));
  }

  private static String cacheId(String... job) {
    PrintStream out = System.out;
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
    try {
      assertEquals(0, run("cache-id", job));
    } finally {
      System.setOut(out);
    }
    return printed.toString(StandardCharsets.UTF_8).strip();
  }

  private static List<Path> segments(Path data) throws IOException {
    List<Path> found = segmentsOrNone(data);
    assertFalse(found.isEmpty(), "segments under " + data);
    return found;
  }

  private static List<Path> segmentsOrNone(Path data) throws IOException {
    try (Stream<Path> files = Files.walk(data)) {
      return files.filter(p -> p.getFileName().toString().startsWith("range-")).sorted().toList();
    }
  }

  private static String[] concat(String first, String[] rest) {
    String[] all = new String[rest.length + 1];
    all[0] = first;
    System.arraycopy(rest, 0, all, 1, rest.length);
    return all;
  }

  private static String[] concat(String[] first, String... more) {
    String[] all = new String[first.length + more.length];
    System.arraycopy(first, 0, all, 0, first.length);
    System.arraycopy(more, 0, all, first.length, more.length);
    return all;
  }

  /** The tensors of a per-token export, as its header lays them out. */
  private record Export(ByteBuffer ids, ByteBuffer logps, ByteBuffer tails, long[] offsets) {
    static Export read(Path file) throws IOException {
      byte[] bytes = Files.readAllBytes(file);
      ByteBuffer all = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
      int headerLength = (int) all.getLong(0);
      JsonNode header =
          new ObjectMapper().readTree(new String(bytes, 8, headerLength, StandardCharsets.UTF_8));
      int data = 8 + headerLength;
      ByteBuffer offsets = tensor(all, header, data, "__offsets__");
      long[] o = new long[offsets.remaining() / 8];
      offsets.asLongBuffer().get(o);
      return new Export(
          tensor(all, header, data, "teacher_ids"),
          tensor(all, header, data, "teacher_logps"),
          tensor(all, header, data, "teacher_tail_logp"),
          o);
    }

    private static ByteBuffer tensor(ByteBuffer all, JsonNode header, int data, String name) {
      JsonNode at = header.get(name).get("data_offsets");
      return all.duplicate()
          .position(data + at.get(0).asInt())
          .limit(data + at.get(1).asInt())
          .slice()
          .order(ByteOrder.LITTLE_ENDIAN);
    }
  }
}
