package org.tensorcache.chaostests;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.tensorcache.actors.session.Sampler;
import org.tensorcache.testing.Reaper;

/**
 * A trainer process SIGKILLed mid-epoch and restarted from its checkpoint step: the steps it reads
 * after the restart must equal those of an uninterrupted run (the {@link Sampler} order with the
 * reference values), none missing, none served twice.
 */
final class TrainerPreemption {
  /** Steps of a run (an epoch has N / GLOBAL_BATCH of them, so the run stays mid-epoch). */
  static final int STEPS = 30;

  static final int GLOBAL_BATCH = 32;

  /**
   * What the preemption found; see {@link ChaosReport#skipped} and {@link ChaosReport#repeated}.
   */
  record Result(long checkpoint, long skipped, long repeated, long resumedRunMs) {}

  private final Episode ep;
  private final List<String> job;
  private final Path logDir;

  private final String run;
  private final long seed;
  private final int killAfter;
  private Process first;

  TrainerPreemption(Episode ep, List<String> job, Path logDir) {
    this.ep = ep;
    this.job = job;
    this.logDir = logDir;
    this.run = "chaos-e" + ep.index() + "-" + System.currentTimeMillis();
    this.seed = ep.random().nextLong();
    this.killAfter = 5 + ep.random().nextInt(STEPS / 2);
  }

  /** Starts the trainer process that is killed later (the cluster must have a live node). */
  void startFirst() throws IOException {
    first = start(run, seed, 0, "a");
  }

  /** Kills the trainer after a seeded number of steps, resumes it, compares every step. */
  Result finish() throws Exception {
    List<String> expected = uninterrupted(seed);
    Path firstLog = log("a");
    long deadline = System.nanoTime() + Duration.ofSeconds(180).toNanos();
    while (TrainerMain.steps(read(firstLog)).size() < killAfter) {
      if (!first.isAlive() || System.nanoTime() > deadline) {
        first.destroyForcibly();
        throw new IllegalStateException("trainer read no " + killAfter + " steps, see " + firstLog);
      }
      Thread.sleep(50);
    }
    first.destroyForcibly(); // SIGKILL mid-epoch
    long t0 = System.nanoTime();
    first.waitFor(30, TimeUnit.SECONDS);
    List<String> before = TrainerMain.steps(read(firstLog));
    // the checkpoint: a step the killed trainer had read, as a trainer checkpoints every few steps
    long checkpoint = 1 + ep.random().nextInt(killAfter);
    Process second = start(run, seed, checkpoint, "b");
    if (!second.waitFor(240, TimeUnit.SECONDS)) {
      second.destroyForcibly();
    }
    List<String> after = TrainerMain.steps(read(log("b")));
    long repeated = 0;
    for (int j = 0; j < before.size(); j++) {
      repeated += before.get(j).equals(expected.get(j)) ? 0 : 1;
    }
    for (int j = 0; j < after.size(); j++) {
      int at = (int) checkpoint + j;
      repeated += at < expected.size() && after.get(j).equals(expected.get(at)) ? 0 : 1;
    }
    long skipped = Math.max(0, expected.size() - checkpoint - after.size());
    return new Result(checkpoint, skipped, repeated, (System.nanoTime() - t0) / 1_000_000);
  }

  /** Every step of an uninterrupted run of {@code seed}, as {@link TrainerMain#line} prints it. */
  private List<String> uninterrupted(long seed) {
    Sampler sampler = Sampler.of(ep.cache().spec().n(), seed, GLOBAL_BATCH, 1);
    List<String> out = new ArrayList<>();
    for (long s = 0; s < STEPS; s++) {
      long[] indices = sampler.indices(s, 0);
      out.add(TrainerMain.line(s, indices, ep.reference().valuesOf(indices)));
    }
    return out;
  }

  private Process start(String run, long seed, long from, String suffix) throws IOException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"));
    cmd.addAll(List.of("-Dai.djl.offline=true", "-cp", System.getProperty("java.class.path")));
    cmd.add(TrainerMain.class.getName());
    String seeds =
        String.join(",", ep.cluster().livePorts().stream().map(p -> "127.0.0.1:" + p).toList());
    cmd.addAll(
        List.of(
            seeds,
            run,
            Long.toString(seed),
            Integer.toString(GLOBAL_BATCH),
            Long.toString(from),
            Integer.toString(STEPS)));
    cmd.addAll(job);
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
    pb.redirectOutput(log(suffix).toFile());
    pb.environment().putAll(ep.pg());
    // a failed step of the run must not leave a trainer member behind
    return Reaper.start(pb);
  }

  private Path log(String suffix) {
    return logDir.resolve("trainer-e" + ep.index() + "-" + suffix + ".log");
  }

  private static String read(Path log) throws IOException {
    return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
  }
}
