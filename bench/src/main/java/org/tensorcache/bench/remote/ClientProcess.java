package org.tensorcache.bench.remote;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The {@link RemoteClient} JVM: started once, then asked to measure one server after the other. It
 * gets the launcher's class path, the Aeron flags, and any {@code -Dpekko.*} or {@code -Daeron.*}
 * given to this JVM, so that a setting tried on the server applies to the client as well.
 */
final class ClientProcess implements AutoCloseable {
  private final Process process;
  private final PrintWriter commands;
  private final BufferedReader output;

  ClientProcess(String cacheId, RedisServer redis, Path work, boolean quick) throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-Xmx1g");
    cmd.add("-Djava.awt.headless=true");
    RemoteBench.AERON_PROPERTIES.forEach((k, v) -> cmd.add("-D" + k + "=" + v));
    System.getProperties()
        .forEach(
            (k, v) -> {
              String key = k.toString();
              if ((key.startsWith("pekko.") || key.startsWith("aeron."))
                  && !RemoteBench.AERON_PROPERTIES.containsKey(key)) {
                cmd.add("-D" + key + "=" + v);
              }
            });
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), RemoteClient.class.getName()));
    cmd.addAll(List.of("--cache", cacheId, "--n", Integer.toString(RemoteBench.N)));
    cmd.addAll(List.of("--redis", Integer.toString(redis.port())));
    cmd.addAll(List.of("--redis-pid", Long.toString(redis.pid())));
    cmd.addAll(List.of("--server-pid", Long.toString(ProcessHandle.current().pid())));
    cmd.addAll(List.of("--work", work.toString()));
    if (quick) {
      cmd.add("--quick");
    }
    process = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    // a client that hangs is stopped, which ends any read below
    CompletableFuture.runAsync(
        process::destroyForcibly,
        CompletableFuture.delayedExecutor(quick ? 120 : 900, TimeUnit.SECONDS));
    commands = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
    output =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
  }

  /**
   * Measures the server whose lookup actor is at {@code target} (for the endpoint: its {@code
   * host:port}); returns the rows.
   */
  @SuppressWarnings("unchecked")
  List<Map<String, Object>> measure(String transport, String target) throws Exception {
    commands.println("run " + transport + " " + target);
    for (String line; (line = output.readLine()) != null; ) {
      if (line.startsWith(RemoteClient.RESULT)) {
        return new ObjectMapper()
            .readValue(line.substring(RemoteClient.RESULT.length()), List.class);
      }
      System.out.println("client: " + line);
    }
    throw new IllegalStateException(
        "the client stopped while measuring " + transport + ", see its output above");
  }

  @Override
  public void close() throws InterruptedException {
    commands.println("exit");
    if (!process.waitFor(30, TimeUnit.SECONDS)) {
      process.destroyForcibly();
    }
  }
}
