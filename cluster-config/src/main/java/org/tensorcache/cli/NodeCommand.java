package org.tensorcache.cli;

import com.typesafe.config.Config;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.typed.Cluster;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.launch.HostPort;
import org.tensorcache.launch.Job;
import org.tensorcache.launch.JobOptions;
import org.tensorcache.launch.NodeLauncher;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import sun.misc.Signal;

/**
 * A cluster node process: registers the job's cache, joins the cluster and serves until SIGTERM,
 * which leaves the cluster gracefully (coordinated shutdown) and exits with code 0.
 */
@Command(
    name = "node",
    mixinStandardHelpOptions = true,
    description = "Run a cluster node that computes, keeps and serves the job's cache.")
final class NodeCommand implements Callable<Integer> {
  static final Set<String> ROLES = Set.of("compute", "lookup", "trainer");

  /** The shutdown reason of a SIGTERM: a preemption notice or an operator's stop. */
  enum Terminated implements CoordinatedShutdown.Reason {
    BY_SIGNAL
  }

  @Mixin JobOptions job;
  @Mixin ClusterOptions cluster;
  @Mixin OpsOptions ops;

  @Option(
      names = "--roles",
      defaultValue = "compute,lookup",
      description =
          "Comma-separated roles of compute, lookup, trainer (default: ${DEFAULT-VALUE}).")
  String roles;

  @Option(
      names = "--port",
      defaultValue = "25520",
      description = "Remoting port of this node (default: ${DEFAULT-VALUE}).")
  int port;

  @Option(
      names = "--lookup-port",
      description =
          "Binary lookup port for processes that are no cluster members (RemoteLookupClient);"
              + " 0 picks a free one (default: none).")
  Integer lookupPort;

  @Override
  public Integer call() throws Exception {
    List<String> roleList = parseRoles(roles);
    HostPort.checkPort(port, "--port");
    if (lookupPort != null && (lookupPort < 0 || lookupPort > 65535)) {
      throw new IllegalArgumentException(
          "--lookup-port " + lookupPort + " out of range, expected 1..65535 or 0 (any free port)");
    }
    Map<String, Object> served = ops.overrides(cluster.host); // checked before anything is made
    List<String> seeds = cluster.seeds(List.of()).stream().map(HostPort::toString).toList();
    Job prepared = job.prepare();
    Map<String, Object> overrides =
        new HashMap<>(NodeLauncher.clusterOverrides(cluster.host, port, seeds, roleList));
    // the exit code says how the node ended, so the JVM is not left from inside the shutdown
    overrides.put("pekko.coordinated-shutdown.exit-jvm", "off");
    if (lookupPort != null) {
      overrides.put("tensorcache.lookup.endpoint.port", lookupPort);
    }
    overrides.putAll(served);
    Config config = NodeLauncher.config(cluster.profiles(), overrides, job.dataDir());
    NodeLauncher.Node node = NodeLauncher.start(config, List.of(prepared.definition()));
    ActorSystem<Void> system = node.system();
    Signal.handle(
        new Signal("TERM"), s -> CoordinatedShutdown.get(system).runAll(Terminated.BY_SIGNAL));
    String address = Cluster.get(system).selfMember().address().toString();
    String endpoint =
        TensorCacheNode.get(system)
            .endpointAddress()
            .map(a -> " lookup-port=" + a.getHostString() + ":" + a.getPort())
            .orElse("");
    String operations = OpsOptions.describe(system); // management= and metrics=, when served
    NodeLauncher.whenUp(system)
        .thenRun(
            () ->
                System.out.printf(
                    "node up: %s roles=%s cache=%s%s%s%n",
                    address, roleList, prepared.definition().cacheId(), endpoint, operations));
    system.getWhenTerminated().toCompletableFuture().join();
    Optional<CoordinatedShutdown.Reason> reason =
        CoordinatedShutdown.get(system).getShutdownReason();
    String status = Cluster.get(system).selfMember().status().toString();
    if (reason.isPresent()
        && (reason.get() == Terminated.BY_SIGNAL
            || reason.get() == CoordinatedShutdown.clusterLeavingReason())) {
      System.out.printf("node stopped: %s left the cluster (member %s)%n", address, status);
      return 0;
    }
    throw new IllegalStateException(
        "node "
            + address
            + " stopped: "
            + reason.map(Object::toString).orElse("actor system terminated")
            + " (member "
            + status
            + ")");
  }

  /** The roles of {@code text}, each one of {@link #ROLES}. */
  static List<String> parseRoles(String text) {
    Set<String> out = new LinkedHashSet<>();
    for (String part : text.split(",", -1)) {
      String role = part.trim();
      if (!ROLES.contains(role)) {
        throw new IllegalArgumentException(
            "unknown role '" + role + "' in --roles, expected compute, lookup or trainer");
      }
      out.add(role);
    }
    return new ArrayList<>(out);
  }
}
