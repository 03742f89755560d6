package org.tensorcache.dist;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.tensorcache.testing.Reaper;

/**
 * The distribution archive unpacked into an empty directory, and its launcher run from there the
 * way a user without the source tree runs it: a bare environment (no TENSORCACHE_CLASSPATH, no
 * Maven settings, a fresh HOME, so DJL unpacks its native library from lib/ anew), small heaps.
 */
final class Unpacked {
  /** The archive's one top directory, {@code tensorcache-VERSION}. */
  final Path home;

  /** HOME of every command: the DJL cache lands under it. */
  final Path userHome;

  private Unpacked(Path home, Path userHome) {
    this.home = home;
    this.userHome = userHome;
  }

  /** The archive named by the build's {@code dist.archive}, unpacked under {@code into}. */
  static Unpacked unpack(Path into) throws Exception {
    Path archive = Path.of(property("dist.archive"));
    assertTrue(Files.isRegularFile(archive), "no archive at " + archive + ": run mvn package");
    Path target = Files.createDirectories(into.resolve("unpacked"));
    Path log = into.resolve("tar.log");
    Process tar =
        new ProcessBuilder("tar", "-xzf", archive.toString(), "-C", target.toString())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    assertEquals(0, finish(tar, Duration.ofSeconds(120)), "tar: " + Files.readString(log));
    Path home = target.resolve(property("dist.name"));
    assertTrue(Files.isDirectory(home), "no " + home.getFileName() + " in the archive");
    return new Unpacked(home, Files.createDirectories(into.resolve("home")));
  }

  /** bin/tensorcache with {@code args}, started in {@code workDir}, its output to {@code log}. */
  ProcessBuilder launcher(Path workDir, Path log, String... args) {
    List<String> command = new ArrayList<>();
    command.add(home.resolve("bin/tensorcache").toString());
    command.addAll(List.of(args));
    return bare(new ProcessBuilder(command), workDir, log);
  }

  /** {@code pb} in {@code workDir} with only the variables a user has, output to {@code log}. */
  ProcessBuilder bare(ProcessBuilder pb, Path workDir, Path log) {
    pb.directory(workDir.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
    Map<String, String> env = pb.environment();
    env.clear();
    env.put("PATH", "/usr/bin:/bin");
    env.put("HOME", userHome.toString());
    env.put("JAVA_HOME", System.getProperty("java.home"));
    env.put("JAVA_OPTS", "-Xmx512m");
    env.put("LANG", "C.UTF-8");
    return pb;
  }

  /** A finished command: its exit code and everything it wrote. */
  record Result(int exit, String output) {}

  /** Runs {@code pb} to its end, at most {@code timeout}. */
  static Result run(ProcessBuilder pb, Duration timeout) throws Exception {
    Path log = Path.of(pb.redirectOutput().file().getPath());
    int exit = finish(Reaper.start(pb), timeout);
    return new Result(exit, read(log));
  }

  /** The exit code of {@code p}; killed, and the test failed, past {@code timeout}. */
  static int finish(Process p, Duration timeout) throws InterruptedException {
    if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      throw new AssertionError(p.info().commandLine().orElse("a command") + " ran past " + timeout);
    }
    return p.exitValue();
  }

  static String read(Path log) throws IOException {
    return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
  }

  private static String property(String name) {
    String value = System.getProperty(name);
    if (value == null) {
      throw new IllegalStateException(
          "system property " + name + " not set, expected the build to set it (dist/pom.xml)");
    }
    return value;
  }
}
