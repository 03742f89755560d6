package org.tensorcache.bench.byo;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The Python interpreter the benchmark's scripts run with: {@code $TENSORCACHE_PYTHON}, else {@code
 * python3} when it imports torch and transformers, else a virtual environment made once under the
 * work directory with {@code pip install torch transformers tokenizers}. {@link #usable()} is
 * false, with {@link #reason()}, when none of them works.
 */
public final class PythonEnv {
  private static final String IMPORTS = "import torch, transformers, tokenizers";

  private final String executable;
  private final String origin;
  private final String reason;

  private PythonEnv(String executable, String origin, String reason) {
    this.executable = executable;
    this.origin = origin;
    this.reason = reason;
  }

  /** Finds or makes the interpreter; never throws for a missing or broken Python. */
  public static PythonEnv find(Path workDir) throws InterruptedException {
    String given = System.getenv("TENSORCACHE_PYTHON");
    if (given != null && !given.isBlank()) {
      String problem = imports(given);
      return problem == null
          ? new PythonEnv(given, "TENSORCACHE_PYTHON", null)
          : new PythonEnv(
              null, "TENSORCACHE_PYTHON", "TENSORCACHE_PYTHON=" + given + ": " + problem);
    }
    String system = imports("python3");
    if (system == null) {
      return new PythonEnv("python3", "python3 on the PATH", null);
    }
    Path venv = workDir.resolve("venv");
    String python = venv.resolve("bin/python").toString();
    if (Files.isExecutable(venv.resolve("bin/python")) && imports(python) == null) {
      return new PythonEnv(python, "the venv " + venv + " made by an earlier run", null);
    }
    System.out.printf(
        "python3 cannot be used (%s) and TENSORCACHE_PYTHON is not set: making a venv at %s"
            + " (python3 -m venv, pip install torch transformers tokenizers)%n",
        system, venv);
    try {
      if (exec(List.of("python3", "-m", "venv", "--clear", venv.toString()), 600) != 0) {
        return new PythonEnv(null, "venv", "python3 -m venv " + venv + " failed");
      }
      List<String> install =
          List.of(python, "-m", "pip", "install", "torch", "transformers", "tokenizers");
      if (exec(install, 3600) != 0) {
        return new PythonEnv(null, "venv", String.join(" ", install) + " failed");
      }
    } catch (IOException e) {
      return new PythonEnv(null, "venv", "could not run python3: " + e.getMessage());
    }
    String problem = imports(python);
    return problem == null
        ? new PythonEnv(python, "the venv " + venv + " made now", null)
        : new PythonEnv(null, "venv", python + ": " + problem);
  }

  /** Null when {@code python} imports torch, transformers and tokenizers, else why not. */
  private static String imports(String python) throws InterruptedException {
    try {
      Process p =
          new ProcessBuilder(python, "-c", IMPORTS)
              .redirectErrorStream(true)
              .redirectInput(ProcessBuilder.Redirect.PIPE)
              .start();
      p.getOutputStream().close();
      byte[] out = p.getInputStream().readAllBytes();
      if (!p.waitFor(300, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return "'" + IMPORTS + "' did not finish in 300 s";
      }
      if (p.exitValue() == 0) {
        return null;
      }
      String text = new String(out, StandardCharsets.UTF_8).strip();
      String last =
          text.isEmpty() ? "exit " + p.exitValue() : text.lines().reduce((a, b) -> b).get();
      return "'" + IMPORTS + "' failed: " + last;
    } catch (IOException e) {
      return "cannot be run (" + e.getMessage() + ")";
    }
  }

  /** Runs {@code command} with the console as its output; returns its exit code. */
  static int exec(List<String> command, long timeoutS) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).inheritIO().start();
    if (!p.waitFor(timeoutS, TimeUnit.SECONDS)) {
      p.destroyForcibly().waitFor();
      throw new IOException(String.join(" ", command) + " did not finish in " + timeoutS + " s");
    }
    return p.exitValue();
  }

  /**
   * Starts {@code script} with {@code args}, its standard input and output piped to the caller and
   * its standard error to {@code log}.
   */
  Process start(Path script, List<String> args, Path log) throws IOException {
    List<String> command = new ArrayList<>(List.of(executable, script.toString()));
    command.addAll(args);
    Files.createDirectories(log.toAbsolutePath().getParent());
    return new ProcessBuilder(command)
        .redirectError(ProcessBuilder.Redirect.to(log.toFile()))
        .start();
  }

  /** The last lines of {@code log}, to quote in an error. */
  static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  /** Whether an interpreter with torch, transformers and tokenizers was found or made. */
  public boolean usable() {
    return executable != null;
  }

  /** The interpreter, or null. */
  public String executable() {
    return executable;
  }

  /** Where it came from. */
  public String origin() {
    return origin;
  }

  /** Why there is none, or null. */
  public String reason() {
    return reason;
  }
}
