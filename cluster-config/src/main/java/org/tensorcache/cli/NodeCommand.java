package org.tensorcache.cli;

import com.typesafe.config.Config;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.typed.Cluster;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.launch.ComputeOptions;
import org.tensorcache.launch.DnsJoiner;
import org.tensorcache.launch.DnsSeeds;
import org.tensorcache.launch.HostPort;
import org.tensorcache.launch.Job;
import org.tensorcache.launch.JobOptions;
import org.tensorcache.launch.NodeLauncher;
import org.tensorcache.launch.OptionRanges;
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
  @Mixin ComputeOptions compute;
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

  @Option(
      names = "--lookup-tls-cert",
      paramLabel = "FILE",
      description =
          "The lookup port's certificate chain (PEM, this node's first): with --lookup-tls-key and"
              + " --lookup-tls-client-ca the port speaks TLS 1.3 and requires client certificates.")
  Path lookupTlsCert;

  @Option(
      names = "--lookup-tls-key",
      paramLabel = "FILE",
      description = "The private key of --lookup-tls-cert (PEM, unencrypted PKCS#8).")
  Path lookupTlsKey;

  @Option(
      names = "--lookup-tls-client-ca",
      paramLabel = "FILE",
      description =
          "The CA certificates (PEM) that sign the lookup port's client certificates, kept apart"
              + " from any cluster CA.")
  Path lookupTlsClientCa;

  @Option(
      names = "--lookup-token-file",
      paramLabel = "FILE",
      description =
          "A file holding the lookup port's token: every connection must present it first.")
  Path lookupTokenFile;

  @Override
  public Integer call() throws Exception {
    List<String> roleList = parseRoles(roles);
    HostPort.checkPort(port, "--port");
    if (lookupPort != null) {
      OptionRanges.port("--lookup-port", lookupPort, true);
    }
    Map<String, Object> served = ops.overrides(cluster.host); // checked before anything is made
    Optional<DnsSeeds> dns = cluster.dns(port);
    dns.ifPresent(d -> d.requireIpAddress(cluster.host));
    List<String> seeds =
        dns.isPresent()
            ? List.of()
            : cluster.seeds(List.of()).stream().map(HostPort::toString).toList();
    Map<String, Object> settings = cluster.overrides();
    Job prepared = job.prepare(compute);
    Map<String, Object> overrides =
        new HashMap<>(NodeLauncher.clusterOverrides(cluster.host, port, seeds, roleList));
    if (dns.isPresent()) {
      overrides.put("pekko.cluster.seed-nodes", List.of()); // the DnsJoiner joins
    }
    overrides.putAll(settings);
    // the exit code says how the node ended, so the JVM is not left from inside the shutdown
    overrides.put("pekko.coordinated-shutdown.exit-jvm", "off");
    if (lookupPort != null) {
      overrides.put("tensorcache.lookup.endpoint.port", lookupPort);
    }
    overrides.putAll(lookupSecurity());
    overrides.putAll(served);
    Config config = NodeLauncher.config(cluster.profiles(), overrides, job.dataDir());
    NodeLauncher.Node node = NodeLauncher.start(config, List.of(prepared.definition()));
    ActorSystem<Void> system = node.system();
    dns.ifPresent(d -> DnsJoiner.start(system, d, true));
    Signal.handle(
        new Signal("TERM"), s -> CoordinatedShutdown.get(system).runAll(Terminated.BY_SIGNAL));
    CompletableFuture<Long> lastPhase = new CompletableFuture<>();
    CoordinatedShutdown.get(system)
        .addTask(
            CoordinatedShutdown.PhaseActorSystemTerminate(),
            "tensorcache-last-phase",
            () -> {
              lastPhase.complete(System.nanoTime());
              return CompletableFuture.completedFuture(Done.getInstance());
            });
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
                printLine(
                    String.format(
                        "node up: %s roles=%s cache=%s%s%s%n",
                        address, roleList, prepared.definition().cacheId(), endpoint, operations)));
    awaitTermination(system, lastPhase);
    Optional<CoordinatedShutdown.Reason> reason =
        CoordinatedShutdown.get(system).getShutdownReason();
    String status = Cluster.get(system).selfMember().status().toString();
    if (reason.isPresent()
        && (reason.get() == Terminated.BY_SIGNAL
            || reason.get() == CoordinatedShutdown.clusterLeavingReason())) {
      printLine(String.format("node stopped: %s left the cluster (member %s)%n", address, status));
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

  /**
   * Waits until {@code system} has terminated, or until the last phase of its coordinated shutdown
   * has run for its timeout and a little more. Pekko's exit-jvm, off here so that the exit code is
   * ours, ends the JVM then too: a node cut off from the others and downed may otherwise wait for
   * connections to them until the network heals.
   */
  private static void awaitTermination(ActorSystem<Void> system, CompletableFuture<Long> lastPhase)
      throws InterruptedException, ExecutionException {
    CompletableFuture<?> terminated = system.getWhenTerminated().toCompletableFuture();
    long bound =
        CoordinatedShutdown.get(system)
                .timeout(CoordinatedShutdown.PhaseActorSystemTerminate())
                .toNanos()
            + TimeUnit.SECONDS.toNanos(2);
    while (true) {
      try {
        terminated.get(1, TimeUnit.SECONDS);
        return;
      } catch (TimeoutException e) {
        if (lastPhase.isDone() && System.nanoTime() - lastPhase.getNow(0L) > bound) {
          System.out.printf(
              "node: the actor system did not terminate within %d ms of the last shutdown phase;"
                  + " exiting%n",
              TimeUnit.NANOSECONDS.toMillis(bound));
          return;
        }
      }
    }
  }

  /** The overrides of the lookup port's TLS and token options, checked for completeness. */
  Map<String, Object> lookupSecurity() {
    Map<String, Object> out = new HashMap<>();
    List<Path> tls = Arrays.asList(lookupTlsCert, lookupTlsKey, lookupTlsClientCa);
    boolean anyTls = tls.stream().anyMatch(Objects::nonNull);
    if ((anyTls || lookupTokenFile != null) && lookupPort == null) {
      throw new IllegalArgumentException(
          "--lookup-tls-* and --lookup-token-file secure the lookup port, expected --lookup-port"
              + " too");
    }
    if (anyTls) {
      if (tls.contains(null)) {
        throw new IllegalArgumentException(
            "--lookup-tls-cert, --lookup-tls-key and --lookup-tls-client-ca go together, expected"
                + " all three");
      }
      String at = "tensorcache.lookup.endpoint.tls.";
      out.put(at + "enabled", true);
      out.put(at + "certificate", lookupTlsCert.toAbsolutePath().toString());
      out.put(at + "private-key", lookupTlsKey.toAbsolutePath().toString());
      out.put(at + "client-ca", lookupTlsClientCa.toAbsolutePath().toString());
    }
    if (lookupTokenFile != null) {
      out.put(
          "tensorcache.lookup.endpoint.token-file", lookupTokenFile.toAbsolutePath().toString());
    }
    return out;
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

  /**
   * Writes {@code line} to standard output in one write: {@code System.out} buffers only 128 bytes,
   * so a longer line printed piece by piece can be split by the log lines a reader of both streams
   * gets in between, and a launcher looking for it would not find it.
   */
  private static void printLine(String line) {
    byte[] bytes = line.getBytes(java.nio.charset.Charset.defaultCharset());
    System.out.write(bytes, 0, bytes.length);
    System.out.flush();
  }
}
