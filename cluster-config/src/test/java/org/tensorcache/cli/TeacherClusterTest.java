package org.tensorcache.cli;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A distillation teacher's per-token cache filled by two {@code ./tensorcache node} processes:
 * every range is persisted, and each segment holds exactly the bytes {@code fill --local} writes
 * for the same job, whichever node computed it.
 */
class TeacherClusterTest {
  private static final Path BYO = Path.of("../model-runner/src/test/resources/byo");
  private static final Pattern UP = Pattern.compile("node up: ");

  @TempDir Path dir;
  private NodeProcesses processes;

  private static List<String> job(Path data) {
    return List.of(
        "--data-dir", data.toString(),
        "--model-dir", BYO.resolve("gpt2-split").toString(),
        "--dataset", BYO.resolve("data/completion.jsonl").toString(),
        "--runner", "topk",
        "--top-k", "5",
        "--temperature", "0.7",
        "--max-length", "0",
        "--range-size", "2");
  }

  @Test
  void twoNodesFillTheSegmentsTheLocalFillWrites() throws Exception {
    Path local = dir.resolve("local");
    List<String> fillLocal = new ArrayList<>(List.of("fill", "--local"));
    fillLocal.addAll(job(local));
    assertEquals(0, Main.commandLine().execute(fillLocal.toArray(String[]::new)));

    processes = new NodeProcesses(dir);
    Path shared = dir.resolve("cluster");
    int seed = freePort();
    NodeProcesses.Started first = node("n1", seed, null, shared);
    NodeProcesses.await(first, UP, Duration.ofSeconds(180));
    NodeProcesses.Started second = node("n2", freePort(), seed, shared);
    NodeProcesses.await(second, UP, Duration.ofSeconds(180));

    List<String> args =
        new ArrayList<>(
            List.of(
                "fill", "--seeds", "127.0.0.1:" + seed, "--host", "127.0.0.1", "--timeout", "120"));
    args.addAll(job(dir.resolve("client")));
    NodeProcesses.Started fill = processes.start("fill", args, "-Xmx384m");
    assertTrue(fill.process().waitFor(240, TimeUnit.SECONDS), "fill ended; log:\n" + fill.tail());
    assertEquals(0, fill.process().exitValue(), fill.text());
    assertTrue(fill.text().contains("ranges persisted"), fill.text());

    List<Path> expected = segments(local);
    List<Path> got = segments(shared);
    assertTrue(expected.size() >= 2, "the local fill wrote " + expected);
    assertEquals(
        expected.stream().map(p -> p.getFileName().toString()).toList(),
        got.stream().map(p -> p.getFileName().toString()).toList());
    for (int i = 0; i < expected.size(); i++) {
      assertArrayEquals(
          Files.readAllBytes(expected.get(i)),
          Files.readAllBytes(got.get(i)),
          "segment " + got.get(i) + " holds the bytes of the local fill's");
    }
  }

  private static List<Path> segments(Path data) throws Exception {
    try (Stream<Path> files = Files.walk(data)) {
      return files
          .filter(p -> p.getFileName().toString().matches("range-\\d+\\.safetensors"))
          .sorted()
          .toList();
    }
  }

  private NodeProcesses.Started node(String name, int port, Integer seed, Path data)
      throws Exception {
    List<String> args =
        new ArrayList<>(List.of("node", "--host", "127.0.0.1", "--port", Integer.toString(port)));
    args.addAll(job(data));
    if (seed != null) {
      args.addAll(List.of("--seeds", "127.0.0.1:" + seed));
    }
    return processes.start(name, args, "-Xmx512m");
  }

  private static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  @AfterEach
  void stop() throws InterruptedException {
    if (processes != null) {
      processes.close();
    }
  }
}
