package org.tensorcache.testing;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A killed test run leaves nothing behind: a child JVM ({@link ReaperChild}) starts every server
 * available here, is sent SIGTERM, SIGINT or SIGKILL, and then none of its servers may still run
 * and none of their temporary directories may still exist.
 */
class ReaperTest {
  private static final Duration START_LIMIT = Duration.ofSeconds(180);
  private static final Duration CLEANUP_LIMIT = Duration.ofSeconds(30);

  @TempDir Path dir;

  private final Map<String, Long> pids = new LinkedHashMap<>();
  private final List<Path> dirs = new ArrayList<>();

  @ParameterizedTest(name = "SIG{0}")
  @ValueSource(strings = {"TERM", "INT", "KILL"})
  void aKilledRunLeavesNoServerAndNoTemporaryDirectory(String signal) throws Exception {
    Path log = dir.resolve("child.log");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process child =
        new ProcessBuilder(
                java,
                "-Xmx256m",
                "-cp",
                System.getProperty("java.class.path"),
                ReaperChild.class.getName())
            .redirectError(log.toFile())
            .start();
    try {
      awaitReady(child, log);
      assertTrue(pids.containsKey("s3proxy"), "the child reported no S3Proxy: " + pids);
      Process kill = new ProcessBuilder("kill", "-s", signal, Long.toString(child.pid())).start();
      assertTrue(kill.waitFor(10, TimeUnit.SECONDS) && kill.exitValue() == 0, "kill failed");
      assertTrue(child.waitFor(30, TimeUnit.SECONDS), "the child JVM did not end on SIG" + signal);

      long deadline = System.nanoTime() + CLEANUP_LIMIT.toNanos();
      List<String> left = left();
      while (!left.isEmpty() && System.nanoTime() < deadline) {
        Thread.sleep(200); // polling what other processes do: nothing to await on
        left = left();
      }
      assertTrue(
          left.isEmpty(),
          "still there "
              + CLEANUP_LIMIT.toSeconds()
              + " s after SIG"
              + signal
              + " to the test JVM: "
              + left
              + "\nits log:\n"
              + Files.readString(log));
    } finally {
      child.destroyForcibly();
      if (!left().isEmpty()) {
        cleanUpAfterAFailure();
      }
    }
  }

  /** Reads the child's report until {@code ready}; fails with its log if it ends or is too slow. */
  private void awaitReady(Process child, Path log) throws Exception {
    BufferedReader out =
        new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
    Thread watchdog =
        new Thread(
            () -> {
              try {
                if (!child.waitFor(START_LIMIT.toSeconds(), TimeUnit.SECONDS)) {
                  child.destroyForcibly(); // ends the read below
                }
              } catch (InterruptedException e) {
                // the servers started: the test goes on
              }
            });
    watchdog.start();
    try {
      for (String line = out.readLine(); line != null; line = out.readLine()) {
        String[] words = line.split(" ", 3);
        switch (words[0]) {
          case "ready" -> {
            return;
          }
          case "pid" -> pids.put(words[1], Long.parseLong(words[2]));
          case "dir" -> dirs.add(Path.of(line.substring("dir ".length())));
          default -> {
            // skipped servers, said for the log
          }
        }
      }
      fail(
          "the child JVM ended or took over "
              + START_LIMIT
              + " to start:\n"
              + Files.readString(log));
    } finally {
      watchdog.interrupt();
    }
  }

  /** The recorded processes that still run and the recorded directories that still exist. */
  private List<String> left() {
    List<String> left = new ArrayList<>();
    pids.forEach(
        (name, pid) -> {
          if (running(pid)) {
            left.add(name + " (pid " + pid + ")");
          }
        });
    dirs.stream().filter(Files::exists).forEach(d -> left.add(d.toString()));
    return left;
  }

  /** Whether {@code pid} runs: it exists and is not a zombie waiting for its parent. */
  private static boolean running(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      return stat.charAt(stat.lastIndexOf(") ") + 2) != 'Z';
    } catch (IOException e) {
      return false;
    }
  }

  /** What a failed run left: killed and removed here, so that it does not outlive the test. */
  private void cleanUpAfterAFailure() throws IOException, InterruptedException {
    for (long pid : pids.values()) {
      ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
    }
    for (Path d : dirs) {
      if (Files.exists(d)) {
        new ProcessBuilder("rm", "-rf", d.toString()).start().waitFor(30, TimeUnit.SECONDS);
      }
    }
  }
}
