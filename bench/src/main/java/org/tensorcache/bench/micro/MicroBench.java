package org.tensorcache.bench.micro;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.Arrays;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.runner.options.TimeValue;
import org.openjdk.jmh.runner.options.VerboseMode;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.report.Results;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.segment.SegmentFile;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * Runs the JMH micro benchmarks ({@link MicroBenchmarks}); prints their tables and writes {@code
 * micro.json} and the charts {@code micro-merge.png}, {@code micro-segments.png} and {@code
 * micro-reply.png}. Never fails on a figure: these machines are noisy.
 */
public final class MicroBench {
  private static final List<String> MERGE_LAYOUTS = List.of("logp-1024", "features-1024");
  private static final List<String> SEGMENT_LAYOUTS = List.of("logp-1024", "features-4096");
  private static final List<String> BATCHES = List.of("32", "256", "4096");

  private MicroBench() {}

  /**
   * Runs every benchmark in one forked JVM with this JVM's class path (a smoke run forks none: one
   * short iteration each, in this one), writes the results files into {@code resultsDir} and
   * returns what {@code micro.json} holds.
   */
  public static Map<String, Object> run(Path resultsDir, RunSize size) throws Exception {
    long started = System.nanoTime();
    // checked before timing anything: equal bytes to the product's files, lossless round trips
    Map<String, Integer> segmentBytes = checkedSegmentSizes();
    Map<String, Map<String, Object>> replyBytes = ReplyCodecs.checkedSizes(BATCHES);

    // 24 benchmarks, each in a fresh JVM of about a second of start-up (three also start an
    // ActorSystem): quick keeps 0.5 s of iterations each to stay near 40 s on an idle 2-core
    // machine. It is too short for the JIT to finish when the cores are oversubscribed; then
    // the figures describe the interpreter and only the full mode (8 x 1 s) is worth reading.
    int iterationMs = size.pick(1000, 100, 10);
    int warmups = size.pick(3, 2, 0);
    int measurements = size.pick(5, 3, 1);
    int forks = size.pick(1, 1, 0);
    String[] jvmArgs = {"-Xmx1g", "-Djava.awt.headless=true"};
    Map<String, Object> settings = new LinkedHashMap<>();
    settings.put("mode", "average time per operation, ns");
    settings.put("forks", forks);
    settings.put("warmup", warmups + " x " + iterationMs + " ms");
    settings.put("measurement", measurements + " x " + iterationMs + " ms");
    settings.put("jvm_args", List.of(jvmArgs));
    settings.put("error", "half-width of JMH's 99.9% confidence interval over the iterations");
    System.out.printf(
        "== JMH micro benchmarks (%s: %s warm-up, %s measured, %d fork(s) each) ==%n",
        size.label(), settings.get("warmup"), settings.get("measurement"), forks);
    Collection<RunResult> runs =
        new Runner(
                new OptionsBuilder()
                    .include("^" + MicroBenchmarks.class.getName().replace(".", "\\.") + "\\.")
                    .forks(forks)
                    .jvmArgs(jvmArgs)
                    .warmupIterations(warmups)
                    .warmupTime(TimeValue.milliseconds(iterationMs))
                    .measurementIterations(measurements)
                    .measurementTime(TimeValue.milliseconds(iterationMs))
                    .mode(Mode.AverageTime)
                    .timeUnit(TimeUnit.NANOSECONDS)
                    .shouldFailOnError(true)
                    .verbosity(size == RunSize.FULL ? VerboseMode.NORMAL : VerboseMode.SILENT)
                    .build())
            .run();
    if (runs.isEmpty()) {
      throw new IllegalStateException(
          "JMH found no benchmarks: META-INF/BenchmarkList is missing from the class path "
              + System.getProperty("java.class.path"));
    }
    MicroReport report = new MicroReport(runs, resultsDir);
    Map<String, Object> results = new LinkedHashMap<>();
    results.put("benchmark", "micro");
    results.put("when", Instant.now().toString());
    results.put("machine", Results.machine());
    results.put("size", size.label());
    results.put("settings", settings);
    results.put("merge", report.merge(MERGE_LAYOUTS));
    results.put("segments", report.segments(SEGMENT_LAYOUTS, segmentBytes));
    results.put("replies", report.replies(BATCHES, replyBytes));
    results.put("reply_serializers", replyBytes.get("serializers"));
    results.put("wall_s", Math.round((System.nanoTime() - started) / 1e8) / 10.0);
    Results.write(resultsDir.resolve("micro.json"), results);
    return results;
  }

  /**
   * Bytes of the segment of each layout, after checking that {@link SegmentFile#encode} gives the
   * bytes of the file {@link SegmentFile#write} writes and that both read back as the block.
   */
  private static Map<String, Integer> checkedSegmentSizes() throws IOException {
    Map<String, Integer> sizes = new LinkedHashMap<>();
    Path dir = Files.createTempDirectory("micro-segments");
    try {
      for (String layout : SEGMENT_LAYOUTS) {
        CacheSpec spec = Fixtures.spec(layout);
        Fingerprint fp = Fixtures.fingerprint(spec);
        Block block = Fixtures.full(spec, 1);
        Path file = dir.resolve(layout + ".safetensors");
        SegmentFile.write(file, block, fp);
        byte[] memory = SegmentFile.encode(block, fp);
        if (!Arrays.equals(memory, Files.readAllBytes(file))) {
          throw new IllegalStateException(
              "in-memory segment of " + layout + " differs from SegmentFile.write's bytes");
        }
        if (!SegmentFile.read(file, spec, fp, 0).equals(block)
            || !SegmentFile.decode(memory, spec, fp, 0).equals(block)) {
          throw new IllegalStateException("segment of " + layout + " does not read back");
        }
        Files.delete(file);
        sizes.put(layout, memory.length);
      }
    } finally {
      Files.deleteIfExists(dir);
    }
    return sizes;
  }
}
