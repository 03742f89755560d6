package org.tensorcache.bench.byo;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import org.tensorcache.bench.fixture.ChildProcess;

/**
 * One measurement in a process of its own, so that its peak resident memory is that measurement's:
 * a command whose output goes to a log and which writes its result as JSON to a file. A failure is
 * a result too ({@code {"ok": false, "error": ...}}), so that the run goes on without it.
 */
final class ChildRun {
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The child JVM's heap: the fill and the bare loop keep their tensors off the heap. */
  static final String JVM_HEAP = "-Xmx768m";

  private ChildRun() {}

  /**
   * The command of a child JVM with {@code options} running {@link ByoChild} with {@code args} on
   * this JVM's class path.
   */
  static List<String> jvm(List<String> options, List<String> args) {
    return ChildProcess.jvm(options, ByoChild.class.getName(), args);
  }

  /**
   * The child JVM's options with {@code threads} libtorch intra-op threads; {@code quickStart} (a
   * smoke run, whose figures mean nothing) trades speed for start-up time.
   */
  static List<String> jvmOptions(int threads, boolean quickStart) {
    List<String> options = new ArrayList<>();
    options.add(JVM_HEAP);
    options.add("-Dai.djl.pytorch.num_threads=" + threads);
    options.add("-Dai.djl.offline=true");
    if (quickStart) {
      options.addAll(List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
    }
    return options;
  }

  /**
   * Runs {@code command} with {@code env} added to this process's environment and its output in
   * {@code log}, for at most {@code timeoutS} seconds; returns the JSON it wrote to {@code result},
   * with {@code "ok": false} and why when it failed.
   */
  static JsonNode run(
      List<String> command, Map<String, String> env, Path result, Path log, long timeoutS)
      throws IOException, InterruptedException {
    Files.deleteIfExists(result);
    OptionalInt exit = ChildProcess.run(command, env, log, Duration.ofSeconds(timeoutS));
    if (exit.isEmpty()) {
      return failed("did not finish within " + timeoutS + " s (log " + log + ")");
    }
    JsonNode out = Files.isRegularFile(result) ? readOrNull(result) : null;
    if (exit.getAsInt() == 0 && out != null && out.path("ok").asBoolean(false)) {
      return out;
    }
    String why =
        out != null && out.hasNonNull("error")
            ? out.get("error").asText()
            : "exit code " + exit.getAsInt() + " (killed for memory?) without a result";
    return failed(why + " (log " + log + "):\n" + PythonEnv.tail(log));
  }

  private static JsonNode readOrNull(Path file) {
    try {
      return JSON.readTree(file.toFile());
    } catch (IOException e) {
      return null;
    }
  }

  /** A failed measurement's result. */
  static ObjectNode failed(String why) {
    ObjectNode n = JSON.createObjectNode();
    n.put("ok", false);
    n.put("error", why);
    return n;
  }

  /** Writes a child's result. */
  static void write(Path file, Map<String, ?> result) throws IOException {
    Files.createDirectories(file.toAbsolutePath().getParent());
    JSON.writeValue(file.toFile(), result);
  }
}
