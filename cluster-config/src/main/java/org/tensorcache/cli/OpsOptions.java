package org.tensorcache.cli;

import java.util.HashMap;
import java.util.Map;
import org.apache.pekko.actor.typed.ActorSystem;
import org.tensorcache.launch.OptionRanges;
import org.tensorcache.ops.Operations;
import picocli.CommandLine.Option;

/** What a node serves to operators: health checks, metrics and the status page, on their ports. */
final class OpsOptions {
  @Option(
      names = "--management-port",
      description =
          "Serve /alive and /ready (Pekko Management) on this port; 0 picks a free one"
              + " (default: none). /ready fails from the moment a SIGTERM arrives.")
  Integer managementPort;

  @Option(
      names = "--metrics-port",
      description =
          "Serve Prometheus metrics (/metrics), the status page (/) and its data (/status.json)"
              + " on this port; 0 picks a free one (default: none).")
  Integer metricsPort;

  /**
   * The configuration of the given ports, served on {@code host}; a port out of range is an error
   * naming it.
   */
  Map<String, Object> overrides(String host) {
    Map<String, Object> overrides = new HashMap<>();
    if (managementPort != null) {
      check(managementPort, "--management-port");
      overrides.put("pekko.management.http.port", managementPort);
      overrides.put("pekko.management.http.hostname", host);
    }
    if (metricsPort != null) {
      check(metricsPort, "--metrics-port");
      overrides.put("tensorcache.metrics.port", metricsPort);
    }
    return overrides;
  }

  /** The bound addresses for the {@code node up} line: {@code " management=h:p metrics=h:p"}. */
  static String describe(ActorSystem<?> system) {
    Operations ops = Operations.get(system);
    StringBuilder out = new StringBuilder();
    ops.managementAddress()
        .ifPresent(
            a ->
                out.append(" management=")
                    .append(a.getHostString())
                    .append(':')
                    .append(a.getPort()));
    ops.metricsAddress()
        .ifPresent(
            a -> out.append(" metrics=").append(a.getHostString()).append(':').append(a.getPort()));
    return out.toString();
  }

  private static void check(int port, String option) {
    OptionRanges.port(option, port, true);
  }
}
