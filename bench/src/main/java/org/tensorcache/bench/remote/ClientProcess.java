package org.tensorcache.bench.remote;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalInt;
import java.util.TreeMap;
import org.tensorcache.bench.fixture.ChildProcess;
import org.tensorcache.bench.fixture.RunSize;

/**
 * A client JVM without a replica, both of its ends: started with its options as one JSON argument,
 * it measures, writes its answer as JSON to the file its option {@code answer} names and exits. It
 * gets the Aeron flags and any {@code -Dpekko.*} or {@code -Daeron.*} given to this JVM, so that a
 * setting tried on the server applies to the client as well.
 */
public final class ClientProcess {
  /** The Aeron flags the launcher gives a node of the aeron profile, before Aeron reads them. */
  static final Map<String, String> AERON_PROPERTIES =
      Map.of(
          "aeron.socket.so_rcvbuf", "4194304",
          "aeron.socket.so_sndbuf", "4194304",
          "aeron.rcv.initial.window.length", "4194304");

  /** The client's side: measures what its options say. */
  public interface Client {
    Object measure(Map<String, String> options, RunSize size) throws Exception;
  }

  private ClientProcess() {}

  /**
   * Runs {@code main}, which calls {@link #serve}, with {@code options} and returns its answer (in
   * {@code answer}) as a {@code type}; the client is stopped if still running after a limit.
   */
  public static <T> T ask(
      Class<?> main, Map<String, Object> options, Path answer, RunSize size, Class<T> type)
      throws Exception {
    List<String> jvm = new ArrayList<>(List.of("-Xmx1g"));
    Map<Object, Object> properties = new TreeMap<>(System.getProperties());
    properties.putAll(AERON_PROPERTIES);
    properties.forEach(
        (k, v) -> {
          if (k.toString().startsWith("pekko.") || k.toString().startsWith("aeron.")) {
            jvm.add("-D" + k + "=" + v);
          }
        });
    Map<String, String> args = new TreeMap<>(Map.of("size", size.label(), "answer", answer + ""));
    options.forEach((k, v) -> args.put(k, v.toString()));
    List<String> command =
        ChildProcess.jvm(jvm, main.getName(), List.of(new ObjectMapper().writeValueAsString(args)));
    Duration limit = Duration.ofSeconds(size.pick(900, 120, 60));
    OptionalInt exit = ChildProcess.run(command, Map.of(), null, limit);
    if (exit.isEmpty() || exit.getAsInt() != 0) {
      throw new IllegalStateException(
          "the client failed (" + (exit.isEmpty() ? "ran over " + limit : exit) + "), see above");
    }
    return new ObjectMapper().readValue(answer.toFile(), type);
  }

  /**
   * The client's {@code main}; exits at once when done (an aeron-udp system may leave non-daemon
   * threads behind), with 1 on a failed check or server.
   */
  public static void serve(String[] args, Client client) {
    try {
      Map<String, String> options = new ObjectMapper().readValue(args[0], new TypeReference<>() {});
      RunSize size = RunSize.valueOf(options.get("size").toUpperCase(Locale.ROOT));
      Object answer = client.measure(options, size);
      new ObjectMapper().writeValue(Path.of(options.get("answer")).toFile(), answer);
    } catch (Throwable e) {
      e.printStackTrace();
      System.exit(1);
    }
    System.exit(0);
  }
}
