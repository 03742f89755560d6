package org.tensorcache.bench.remote;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.tensorcache.bench.fixture.ChildProcess;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.testing.RedisServer;

/**
 * A client JVM ({@link RemoteClient}, or another benchmark's client): started once, then asked to
 * measure one server after the other, one command line on its standard input each, answered by a
 * line {@code RESULT <json>} on its standard output (its other lines are echoed). It gets the
 * launcher's class path, the Aeron flags, and any {@code -Dpekko.*} or {@code -Daeron.*} given to
 * this JVM, so that a setting tried on the server applies to the client as well.
 */
public final class ClientProcess implements AutoCloseable {
  /** The start of the line that carries a client's answer. */
  public static final String RESULT = "RESULT ";

  /**
   * A client's arguments: {@code --name value} pairs and the flag {@code --quick} or {@code
   * --smoke} (as {@code size=quick} or {@code size=smoke}; {@link #size} reads it); anything else
   * is an error naming it.
   */
  public static Map<String, String> options(String[] args) {
    Map<String, String> a = new HashMap<>();
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--quick") || args[i].equals("--smoke")) {
        a.put("size", args[i].substring(2));
      } else if (args[i].startsWith("--") && i + 1 < args.length) {
        a.put(args[i].substring(2), args[++i]);
      } else {
        throw new IllegalArgumentException("unknown argument '" + args[i] + "'");
      }
    }
    return a;
  }

  /** The size of run the client was started for, from its {@link #options}. */
  public static RunSize size(Map<String, String> options) {
    String size = options.getOrDefault("size", "full");
    return RunSize.valueOf(size.toUpperCase(java.util.Locale.ROOT));
  }

  private final Process process;
  private final PrintWriter commands;
  private final BufferedReader output;

  /**
   * Starts {@code mainClass} with {@code args}; a client still running after {@code limit} is
   * stopped, which ends any read of its answer.
   */
  public ClientProcess(String mainClass, List<String> args, Duration limit) throws Exception {
    List<String> options = new ArrayList<>();
    options.add("-Xmx1g");
    RemoteBench.AERON_PROPERTIES.forEach((k, v) -> options.add("-D" + k + "=" + v));
    System.getProperties()
        .forEach(
            (k, v) -> {
              String key = k.toString();
              if ((key.startsWith("pekko.") || key.startsWith("aeron."))
                  && !RemoteBench.AERON_PROPERTIES.containsKey(key)) {
                options.add("-D" + key + "=" + v);
              }
            });
    List<String> cmd = ChildProcess.jvm(options, mainClass, args);
    process =
        ChildProcess.start(new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT));
    CompletableFuture.runAsync(
        process::destroyForcibly,
        CompletableFuture.delayedExecutor(limit.toSeconds(), TimeUnit.SECONDS));
    commands = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
    output =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
  }

  /**
   * The {@link RemoteClient} of the remote benchmark over a cache of {@code n} examples, measuring
   * against {@code redis} as well.
   */
  static ClientProcess remote(String cacheId, int n, RedisServer redis, Path work, RunSize size)
      throws Exception {
    List<String> args = new ArrayList<>();
    args.addAll(List.of("--cache", cacheId, "--n", Integer.toString(n)));
    args.addAll(List.of("--redis", Integer.toString(redis.port())));
    args.addAll(List.of("--redis-pid", Long.toString(redis.pid())));
    args.addAll(List.of("--server-pid", Long.toString(ProcessHandle.current().pid())));
    args.addAll(List.of("--work", work.toString()));
    size.flag().ifPresent(args::add);
    return new ClientProcess(
        RemoteClient.class.getName(), args, Duration.ofSeconds(size.pick(900, 120, 60)));
  }

  /**
   * Measures the server whose lookup actor is at {@code target} (for the endpoint: its {@code
   * host:port}); returns the rows.
   */
  @SuppressWarnings("unchecked")
  List<Map<String, Object>> measure(String transport, String target) throws Exception {
    return ask("run " + transport + " " + target, List.class);
  }

  /** Sends {@code command} and returns the client's answer as a {@code type}. */
  public <T> T ask(String command, Class<T> type) throws Exception {
    commands.println(command);
    for (String line; (line = output.readLine()) != null; ) {
      if (line.startsWith(RESULT)) {
        return new ObjectMapper().readValue(line.substring(RESULT.length()), type);
      }
      System.out.println("client: " + line);
    }
    throw new IllegalStateException(
        "the client stopped while answering '" + command + "', see its output above");
  }

  @Override
  public void close() throws InterruptedException {
    commands.println("exit");
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly();
    }
  }
}
