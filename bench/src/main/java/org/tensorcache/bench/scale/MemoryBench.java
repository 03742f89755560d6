package org.tensorcache.bench.scale;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import org.tensorcache.bench.fixture.ChildProcess;
import org.tensorcache.bench.fixture.RunSize;

/**
 * Bytes per cached float, measured: one node fills a cache of N = 10 million examples x 2 float
 * fields (see {@link MemoryMeasure}). The full run measures in a child JVM of its own with native
 * memory tracking on and a fixed heap (so the collector's own tables do not grow with the cache)
 * and the product's settings. The quick run (N = 1 million) measures in this JVM, before anything
 * else ran in it, with a 1 s idle timeout for shard entities so that their passivation does not
 * take minutes; it reads native memory tracking only when this JVM was started with it. The smoke
 * run does the same with two ranges and a warm-up cache of two.
 */
final class MemoryBench {
  /**
   * Shard entities passivate after this idle time in the quick and smoke runs (the product: 2
   * minutes).
   */
  private static final String QUICK_IDLE_TIMEOUT = "1s";

  private MemoryBench() {}

  static Map<String, Object> run(Path work, RunSize size) throws Exception {
    Path dir = work.toAbsolutePath().resolve("memory");
    if (size != RunSize.FULL) {
      boolean smoke = size == RunSize.SMOKE;
      int n = smoke ? 2 * ScaleCaches.RANGE_SIZE : 1_000_000;
      int warmUp = smoke ? 2 * ScaleCaches.RANGE_SIZE : MemoryMeasure.MIN_WARM_UP_N;
      Map<String, Object> r =
          MemoryMeasure.measure(
              dir,
              n,
              warmUp,
              Map.of(
                  "pekko.cluster.sharding.passivation.default-idle-strategy.idle-entity.timeout",
                  QUICK_IDLE_TIMEOUT));
      r.put("jvm", "this one (" + size.label() + " run): heap not fixed");
      return r;
    }
    String heap = "3g";
    Path out = work.toAbsolutePath().resolve("memory-result.json");
    Files.deleteIfExists(out);
    List<String> jvm = List.of("-Xms" + heap, "-Xmx" + heap, "-XX:NativeMemoryTracking=summary");
    List<String> command =
        ChildProcess.jvm(
            jvm, MemoryBench.class.getName(), List.of(out.toString(), dir.toString(), "10000000"));
    OptionalInt exit = ChildProcess.run(command, Map.of(), null, Duration.ofMinutes(40));
    if (exit.isEmpty()) {
      throw new IllegalStateException("memory measurement did not end within 40 minutes");
    }
    if (exit.getAsInt() != 0 || !Files.exists(out)) {
      throw new IllegalStateException("memory measurement failed, exit code " + exit.getAsInt());
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> result = new ObjectMapper().readValue(out.toFile(), Map.class);
    result.put("jvm", "child: " + String.join(" ", jvm));
    return result;
  }

  /** The child: {@code MemoryBench RESULT_JSON WORK_DIR N}, with the product's settings. */
  public static void main(String[] args) throws Exception {
    Path out = Path.of(args[0]);
    Map<String, Object> r =
        MemoryMeasure.measure(
            Path.of(args[1]), Integer.parseInt(args[2]), MemoryMeasure.MIN_WARM_UP_N, Map.of());
    Files.createDirectories(out.toAbsolutePath().getParent());
    new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(out.toFile(), r);
  }
}
