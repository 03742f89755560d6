package org.tensorcache.bench.remote;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.tensorcache.bench.fixture.ChildProcess;
import org.tensorcache.bench.fixture.RunSize;

/**
 * A client JVM without a replica, both of its ends: started once with {@code --name value} options,
 * it is sent one command line per server on its standard input and answers each with a line {@code
 * RESULT <json>} on its standard output (its other lines are echoed). It gets the Aeron flags and
 * any {@code -Dpekko.*} or {@code -Daeron.*} given to this JVM, so that a setting tried on the
 * server applies to the client as well.
 */
public final class ClientProcess implements AutoCloseable {
  private static final String RESULT = "RESULT ";

  /** The Aeron flags the launcher gives a node of the aeron profile, before Aeron reads them. */
  static final Map<String, String> AERON_PROPERTIES =
      Map.of(
          "aeron.socket.so_rcvbuf", "4194304",
          "aeron.socket.so_sndbuf", "4194304",
          "aeron.rcv.initial.window.length", "4194304");

  /** The client's side: answers the words of a command line. */
  public interface Client {
    Object answer(String[] words) throws Exception;
  }

  /** Sets a client up from its options ({@code size} is the run's size). */
  public interface Setup {
    Client start(Map<String, String> options, RunSize size) throws Exception;
  }

  private final Process process;
  private final PrintWriter commands;
  private final BufferedReader output;

  /** Starts {@code main}, which calls {@link #serve}; stopped if still running after a limit. */
  public ClientProcess(Class<?> main, Map<String, Object> options, RunSize size) throws Exception {
    List<String> jvm = new ArrayList<>(List.of("-Xmx1g"));
    AERON_PROPERTIES.forEach((k, v) -> jvm.add("-D" + k + "=" + v));
    System.getProperties()
        .forEach(
            (k, v) -> {
              String key = k.toString();
              if ((key.startsWith("pekko.") || key.startsWith("aeron."))
                  && !AERON_PROPERTIES.containsKey(key)) {
                jvm.add("-D" + key + "=" + v);
              }
            });
    List<String> args = new ArrayList<>();
    options.forEach((k, v) -> args.addAll(List.of("--" + k, v.toString())));
    args.addAll(List.of("--size", size.label()));
    List<String> cmd = ChildProcess.jvm(jvm, main.getName(), args);
    process =
        ChildProcess.start(new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT));
    CompletableFuture.runAsync(
        process::destroyForcibly,
        CompletableFuture.delayedExecutor(size.pick(900, 120, 60), TimeUnit.SECONDS));
    commands = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
    output =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
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

  /**
   * The client's {@code main}; exits at once when done (an aeron-udp system may leave non-daemon
   * threads behind), with 1 on a failed check or server.
   */
  public static void serve(String[] args, Setup setup) {
    try {
      Map<String, String> options = new HashMap<>();
      for (int i = 0; i + 1 < args.length; i += 2) {
        if (!args[i].startsWith("--")) {
          throw new IllegalArgumentException("unknown argument '" + args[i] + "'");
        }
        options.put(args[i].substring(2), args[i + 1]);
      }
      RunSize size = RunSize.valueOf(options.get("size").toUpperCase(Locale.ROOT));
      Client client = setup.start(options, size);
      var in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
      for (String line; (line = in.readLine()) != null && line.startsWith("run "); ) {
        Object answer = client.answer(line.split(" "));
        System.out.println(RESULT + new ObjectMapper().writeValueAsString(answer));
      }
    } catch (Throwable e) {
      e.printStackTrace();
      System.exit(1);
    }
    System.exit(0);
  }
}
