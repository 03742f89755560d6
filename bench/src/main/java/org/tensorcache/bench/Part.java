package org.tensorcache.bench;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.function.Supplier;
import org.tensorcache.bench.fixture.RunSize;

/**
 * One part of the benchmarks: its {@code --only} name, the heading printed before it runs, and why
 * it is left out on a machine that lacks what it needs (empty: it runs).
 */
record Part(String name, String heading, Supplier<Optional<String>> needs, Body body) {
  record Run(Path work, Path resultsDir, Path out, RunSize size) {}

  @FunctionalInterface
  interface Body {
    void run(Run run) throws Exception;
  }

  /** A part that needs nothing beyond the JDK and the build. */
  static Part of(String name, String heading, Body body) {
    return new Part(name, heading, Optional::empty, body);
  }

  /** Whether {@code program} is an executable in a directory of the PATH. */
  static boolean onPath(String program) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
        return true;
      }
    }
    return false;
  }
}
