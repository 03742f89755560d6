package org.tensorcache.chaostests;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The node processes of one chaos run, started through {@code ./tensorcache node} on loopback with
 * the PostgreSQL journal and one shared data directory, or (see {@link #ownDataDirs}) each with an
 * empty one of its own; every process it starts is killed by {@link #close()} or, failing that, by
 * a JVM shutdown hook.
 */
final class ChaosCluster implements AutoCloseable {
  /** Only compute nodes host the coordinator, so the lookup member of the test JVM never does. */
  static final String SINGLETON_ROLE = "compute";

  /**
   * Cluster timing of every chaos member (nodes and the members of the test JVM alike, since any of
   * them may lead and down): a crash is detected in about 4 s (heartbeat pause 3 s, the default, so
   * that a busy two-core machine does not suspect live nodes) and removed about 4 s after that
   * (stable-after 3 s, then down-removal-margin 1 s), instead of the production 7 s plus 10 s. A
   * SIGSTOP lasts until the victim is removed, so it always outlasts failure detection.
   */
  static final Map<String, String> TIMING =
      Map.ofEntries(
          Map.entry("pekko.cluster.split-brain-resolver.stable-after", "3s"),
          // a member cut off one way is downed alone before the resolver's stable-after runs out
          // (the lease statement and the downing's gossip within it), as in production
          Map.entry("tensorcache.downing.cut-off-member-after", "500ms"),
          // as in production: a mass preemption seen over a few seconds must not down everyone
          Map.entry("pekko.cluster.split-brain-resolver.down-all-when-unstable", "15s"),
          Map.entry("pekko.cluster.down-removal-margin", "1s"),
          Map.entry("pekko.cluster.failure-detector.acceptable-heartbeat-pause", "3s"),
          Map.entry("pekko.cluster.leader-actions-interval", "500ms"),
          Map.entry("pekko.cluster.unreachable-nodes-reaper-interval", "500ms"),
          Map.entry("pekko.cluster.gossip-interval", "500ms"),
          Map.entry("pekko.cluster.sharding.rebalance-interval", "2s"),
          // the downing lease of a holder killed with others must expire before the survivors
          // decide (heartbeat pause plus stable-after, 6 s here), as with the production 8 s
          Map.entry("tensorcache.lease.heartbeat-timeout", "4s"),
          Map.entry("tensorcache.lease.heartbeat-interval", "500ms"),
          // a statement can take seconds on a machine this loaded; a lease not taken in time
          // would make the side that must down a dead node down itself
          Map.entry("tensorcache.lease.lease-operation-timeout", "10s"));

  private final Path launcher;
  private final Path dataDir;
  private final Path logDir;
  private final Map<String, String> env = new HashMap<>();
  private final List<NodeProcess> all = new CopyOnWriteArrayList<>();
  private final List<NodeProcess> live = new CopyOnWriteArrayList<>();
  private final Thread hook = new Thread(this::killAll, "chaos-kill-nodes");
  private final Map<NodeProcess, Path> dataDirs = new ConcurrentHashMap<>();
  private List<String> jobArgs = List.of();
  private List<String> nodeArgs = List.of();
  private boolean ownDirs;
  private int started;
  private Network network; // null: members reach each other directly
  private final Map<NodeProcess, PartitionProxy> proxies = new ConcurrentHashMap<>();
  private final List<PartitionProxy> inJvmProxies = new CopyOnWriteArrayList<>();

  ChaosCluster(Path launcher, Path dataDir, Path logDir, Map<String, String> pgEnv) {
    this(launcher, dataDir, logDir, pgEnv, TIMING);
  }

  /**
   * A cluster whose nodes get {@code settings} as system properties (config paths and values, as
   * {@link #TIMING}, or logback's variables) on top of their profiles; without {@link #TIMING}
   * there, the profiles' own timing, as in production.
   */
  ChaosCluster(
      Path launcher,
      Path dataDir,
      Path logDir,
      Map<String, String> pgEnv,
      Map<String, String> settings) {
    this.launcher = launcher;
    this.dataDir = dataDir;
    this.logDir = logDir;
    env.putAll(pgEnv);
    env.put("TENSORCACHE_CLASSPATH", System.getProperty("java.class.path"));
    env.put("TENSORCACHE_SHARD_LOG", "DEBUG"); // a line per computed micro-batch, counted
    env.put(
        "JAVA_OPTS",
        "-Xmx384m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dpekko.cluster.singleton.role="
            + SINGLETON_ROLE
            + options(settings));
    Runtime.getRuntime().addShutdownHook(hook);
  }

  /** {@code settings} as {@code -Dkey=value} options, each after a space. */
  private static String options(Map<String, String> settings) {
    StringBuilder b = new StringBuilder();
    settings.forEach((k, v) -> b.append(" -D").append(k).append('=').append(v));
    return b.toString();
  }

  /**
   * Puts every member started from now on behind a {@link PartitionProxy}, so that the returned
   * network can cut it off.
   */
  Network partitionable() {
    if (network == null) {
      network = new Network();
    }
    return network;
  }

  /** The loopback address {@code n} connects out from, or null if it is behind no proxy. */
  String host(NodeProcess n) {
    PartitionProxy p = proxies.get(n);
    return p == null ? null : p.member();
  }

  /**
   * Config overrides for a member in this JVM: behind a proxy of its own when the nodes are (its
   * canonical port the proxy's), none otherwise.
   */
  Map<String, Object> inJvmMember() throws IOException {
    if (network == null) {
      return Map.of();
    }
    int port = LoopbackPorts.next();
    int bindPort = LoopbackPorts.next();
    PartitionProxy proxy = new PartitionProxy(port, bindPort, network.nextHost(), network);
    inJvmProxies.add(proxy);
    Map<String, Object> o = new HashMap<>(Network.overrides(bindPort, proxy.member()));
    o.put("pekko.remote.artery.canonical.port", port);
    return o;
  }

  /**
   * From now on every node starts on an empty data directory of its own ({@code DATA_DIR/nodeN}),
   * sharing no disk with the others, with {@code args} added and {@code env} in its environment.
   */
  void ownDataDirs(List<String> args, Map<String, String> env) {
    this.ownDirs = true;
    this.nodeArgs = List.copyOf(args);
    this.env.putAll(env);
  }

  /** The data directory {@code n} was started with. */
  Path dataDirOf(NodeProcess n) {
    return dataDirs.get(n);
  }

  /**
   * Deletes the data directory of {@code n}, which must have its own and be dead: the local disk of
   * a preempted machine is gone with it.
   */
  void deleteDataDir(NodeProcess n) throws IOException {
    Path dir = dataDirs.get(n);
    if (!ownDirs || dir == null || n.isAlive()) {
      throw new IllegalStateException(
          n.name() + " has no data directory of its own or still runs, expected a dead node's");
    }
    deleteTree(dir);
  }

  /** Deletes {@code dir} and everything in it, if it exists. */
  static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (var files = Files.walk(dir)) {
      for (Path f : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
        Files.delete(f);
      }
    }
  }

  /** The job options every node of the next start gets (cache name included). */
  void job(List<String> args) {
    this.jobArgs = List.copyOf(args);
  }

  /** Starts a node that joins the live ones (or seeds itself if none) and waits until it is Up. */
  NodeProcess startNode() throws IOException, InterruptedException {
    NodeProcess n = launch();
    awaitUp(n);
    return n;
  }

  /** Starts a node without waiting; {@link #awaitUp} follows. */
  NodeProcess launch() throws IOException {
    int port = LoopbackPorts.next();
    List<String> args = new ArrayList<>(List.of("--port", Integer.toString(port)));
    List<String> seeds = live.stream().map(n -> "127.0.0.1:" + n.port()).toList();
    if (!seeds.isEmpty()) {
      args.addAll(List.of("--seeds", String.join(",", seeds)));
    }
    args.addAll(List.of("--roles", "compute,lookup", "--journal", "postgres"));
    String name = "node" + (++started);
    Path dir = dataDir;
    if (ownDirs) {
      dir = dataDir.resolve(name);
      if (Files.exists(dir)) {
        throw new IllegalStateException(dir + " exists, expected a new empty data directory");
      }
      Files.createDirectories(dir);
    }
    args.addAll(List.of("--data-dir", dir.toString()));
    args.addAll(nodeArgs);
    args.addAll(jobArgs);
    Map<String, String> nodeEnv = env;
    PartitionProxy proxy = null;
    if (network != null) { // the cluster knows the node by the proxy's port, the node binds another
      int bindPort = LoopbackPorts.next();
      proxy = new PartitionProxy(port, bindPort, network.nextHost(), network);
      nodeEnv = new HashMap<>(env);
      nodeEnv.put("JAVA_OPTS", env.get("JAVA_OPTS") + Network.options(bindPort, proxy.member()));
    }
    NodeProcess n =
        NodeProcess.start(name, port, launcher, args, nodeEnv, logDir.resolve(name + ".log"));
    if (proxy != null) {
      proxies.put(n, proxy);
    }
    dataDirs.put(n, dir);
    all.add(n);
    live.add(n);
    return n;
  }

  /** Waits for the node's {@code node up:} line. */
  void awaitUp(NodeProcess n) throws IOException, InterruptedException {
    n.awaitLine("node up:", Duration.ofSeconds(120));
  }

  /** Nodes started and not yet known dead, oldest first. */
  List<NodeProcess> live() {
    return List.copyOf(live);
  }

  /** The live node on {@code port}, or null. */
  NodeProcess byPort(int port) {
    return live.stream().filter(n -> n.port() == port).findFirst().orElse(null);
  }

  /** Marks a node dead (it was killed or has exited). */
  void gone(NodeProcess n) {
    live.remove(n);
  }

  /** Every node ever started in this run. */
  List<NodeProcess> all() {
    return List.copyOf(all);
  }

  /** Ports of the live nodes. */
  List<Integer> livePorts() {
    return live.stream().map(NodeProcess::port).toList();
  }

  /** SIGKILLs every live node (a whole-cluster crash) and waits for them. */
  void killAll() {
    for (NodeProcess n : all) {
      n.forceStop();
    }
    live.clear();
    proxies.values().forEach(PartitionProxy::close);
    proxies.clear();
    inJvmProxies.forEach(PartitionProxy::close);
    inJvmProxies.clear();
  }

  @Override
  public void close() {
    killAll();
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // the JVM is already shutting down: the hook runs
    }
  }
}
