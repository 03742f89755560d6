package org.tensorcache.bench.byo;

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
 * The Python interpreter the benchmark's scripts run with: {@code $TENSORCACHE_PYTHON}, else {@code
 * python3} when it imports torch, transformers and TRL, else a virtual environment made once under
 * the work directory with pip (TRL 1.13, whose own precompute the fill is measured against). Not
 * {@link #usable()}, with a {@code reason}, when none of them works.
 */
public record PythonEnv(String executable, String origin, String reason) {
  private static final String IMPORTS = "import torch, transformers, tokenizers, trl, datasets";

  private static final List<String> PACKAGES =
      List.of("torch", "transformers", "tokenizers", "trl==1.13.*", "datasets", "accelerate");

  /** Finds or makes the interpreter; never throws for a missing or broken Python. */
  public static PythonEnv find(Path workDir) throws InterruptedException {
    return find(workDir, true);
  }

  /**
   * The interpreter that {@code TENSORCACHE_PYTHON} or {@code python3} gives, or a venv an earlier
   * run made under {@code workDir} (null: none), making none: for runs too short to install torch.
   */
  public static PythonEnv existing(Path workDir) throws InterruptedException {
    return find(workDir, false);
  }

  private static PythonEnv find(Path workDir, boolean makeVenv) throws InterruptedException {
    String given = System.getenv("TENSORCACHE_PYTHON");
    if (given != null && !given.isBlank()) {
      String problem = imports(given);
      String why = problem == null ? null : "TENSORCACHE_PYTHON=" + given + ": " + problem;
      return new PythonEnv(problem == null ? given : null, "TENSORCACHE_PYTHON", why);
    }
    String system = imports("python3");
    if (system == null) {
      return new PythonEnv("python3", "python3 on the PATH", null);
    } else if (workDir == null) {
      return new PythonEnv(null, "python3", "python3: " + system);
    }
    Path venv = workDir.resolve("venv");
    String python = venv.resolve("bin/python").toString();
    if (Files.isExecutable(venv.resolve("bin/python")) && imports(python) == null) {
      return new PythonEnv(python, "the venv " + venv + " made by an earlier run", null);
    } else if (!makeVenv) {
      String why =
          "; no venv is made in a smoke run (set TENSORCACHE_PYTHON, or run without --smoke";
      return new PythonEnv(null, "python3", "python3: " + system + why + " once to make one)");
    }
    System.out.printf(
        "python3 cannot be used (%s) and TENSORCACHE_PYTHON is not set: making a venv at %s"
            + " (python3 -m venv, pip install %s)%n",
        system, venv, String.join(" ", PACKAGES));
    List<String> install =
        new ArrayList<>(List.of(python, "-m", "pip", "install", "--retries", "0"));
    install.addAll(PACKAGES);
    String problem;
    try {
      if (exec(List.of("python3", "-m", "venv", "--clear", venv.toString()), 600) != 0) {
        problem = "python3 -m venv " + venv + " failed";
      } else if (exec(install, 3600) != 0) {
        problem = String.join(" ", install) + " failed";
      } else {
        String imports = imports(python);
        problem = imports == null ? null : python + ": " + imports;
      }
    } catch (IOException e) {
      problem = "could not run python3: " + e.getMessage();
    }
    return problem == null
        ? new PythonEnv(python, "the venv " + venv + " made now", null)
        : new PythonEnv(null, "venv", problem);
  }

  /** Null when {@code python} imports what the scripts need, else why not. */
  private static String imports(String python) throws InterruptedException {
    try {
      Path log = Files.createTempFile("tensorcache-python", ".log");
      try {
        OptionalInt exit =
            ChildProcess.run(
                List.of(python, "-c", IMPORTS), Map.of(), log, Duration.ofSeconds(300));
        List<String> lines = Files.readAllLines(log);
        if (exit.isEmpty()) {
          return "'" + IMPORTS + "' did not finish in 300 s";
        } else if (exit.getAsInt() != 0) {
          String last = lines.isEmpty() ? "exit " + exit.getAsInt() : lines.get(lines.size() - 1);
          return "'" + IMPORTS + "' failed: " + last;
        }
        return null;
      } finally {
        Files.deleteIfExists(log);
      }
    } catch (IOException e) {
      return "cannot be run (" + e.getMessage() + ")";
    }
  }

  /** Runs {@code command} with the console as its output; returns its exit code. */
  public static int exec(List<String> command, long timeoutS)
      throws IOException, InterruptedException {
    OptionalInt exit = ChildProcess.run(command, Map.of(), null, Duration.ofSeconds(timeoutS));
    if (exit.isEmpty()) {
      throw new IOException(String.join(" ", command) + " did not finish in " + timeoutS + " s");
    }
    return exit.getAsInt();
  }

  public List<String> command(Path script, List<String> args) {
    List<String> command = new ArrayList<>(List.of(executable, script.toString()));
    command.addAll(args);
    return command;
  }

  /** Whether an interpreter with torch, transformers and TRL was found or made. */
  public boolean usable() {
    return executable != null;
  }
}
