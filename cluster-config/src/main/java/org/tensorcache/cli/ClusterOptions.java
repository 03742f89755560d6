package org.tensorcache.cli;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.tensorcache.launch.ClientNode;
import org.tensorcache.launch.DiscoverySettings;
import org.tensorcache.launch.DnsSeeds;
import org.tensorcache.launch.HostPort;
import picocli.CommandLine.Option;

/**
 * How a command reaches the cluster: seed nodes (or the DNS name of the members), own host,
 * transport and journal profiles.
 */
final class ClusterOptions {
  /** The transport profile. */
  enum Transport {
    cluster,
    aeron,
    tls
  }

  /** The journal profile. */
  enum Journal {
    h2,
    postgres
  }

  @Option(
      names = "--seeds",
      description =
          "Seed nodes as host:port,... (a node without seeds seeds itself), or dns:NAME[:PORT]:"
              + " the members at every address NAME resolves to (a Kubernetes headless service),"
              + " on PORT (default: a node's own --port; for status and fill 25520). NAME is"
              + " resolved again until the member has joined; when no cluster answers, the node"
              + " with the lowest address forms it. With dns:, a node's --host must be its IP"
              + " address as NAME's records give it.")
  String seeds;

  @Option(
      names = "--dns-server",
      paramLabel = "HOST:PORT",
      description =
          "With --seeds dns:NAME: the DNS server to ask for NAME (default: the system's"
              + " resolver).")
  String dnsServer;

  @Option(
      names = "--host",
      defaultValue = "127.0.0.1",
      description = "Address other members reach this one at (default: ${DEFAULT-VALUE}).")
  String host;

  @Option(
      names = "--profile",
      defaultValue = "cluster",
      description =
          "Transport: cluster (Artery TCP), aeron (Aeron UDP) or tls (Artery TCP over TLS 1.3,"
              + " mutual authentication; see --tls-dir) (default: ${DEFAULT-VALUE}).")
  Transport transport;

  @Option(
      names = "--tls-dir",
      paramLabel = "DIR",
      description =
          "With --profile tls: the directory of this member's node.key, node.crt and ca.crt, as"
              + " 'certs' writes them (default: <data-dir>/certs, or TENSORCACHE_TLS_DIR).")
  Path tlsDir;

  @Option(
      names = "--journal",
      defaultValue = "h2",
      description =
          "Journal: h2 (a file under --data-dir, shared by the nodes of one machine) or postgres"
              + " (default: ${DEFAULT-VALUE}).")
  Journal journal;

  /**
   * The DNS name of {@code --seeds dns:NAME[:PORT]}, its port {@code defaultPort} where none is
   * given; empty when the seeds are host:port entries or none.
   */
  Optional<DnsSeeds> dns(int defaultPort) {
    return DnsSeeds.parse(seeds).map(d -> d.withDefaultPort(defaultPort));
  }

  /** The seed nodes; {@code fallback} when none are given. Ask {@link #dns} first. */
  List<HostPort> seeds(List<HostPort> fallback) {
    if (DnsSeeds.parse(seeds).isPresent()) {
      throw new IllegalStateException("--seeds " + seeds + " names DNS seeds, not host:port");
    }
    List<HostPort> parsed = HostPort.parseList(seeds, "seed");
    return parsed.isEmpty() ? fallback : parsed;
  }

  /**
   * Joins the cluster as a short-lived client member (status, fill): through the seeds, the members
   * at the addresses of their DNS name (on port 25520 unless it names one), or without seeds a node
   * on this machine at 25520.
   */
  ClientNode join(Path dataDir, Duration within) {
    List<HostPort> local = StatusCommand.DEFAULT_SEEDS;
    Optional<DnsSeeds> dns = dns(local.get(0).port());
    if (dns.isPresent()) {
      return ClientNode.join(host, profiles(), overrides(), dns.get(), dataDir, within);
    }
    return ClientNode.join(host, profiles(), overrides(), seeds(local), dataDir, within);
  }

  /** The configuration profiles, the first one winning: transport, cluster, journal. */
  List<String> profiles() {
    List<String> profiles = new ArrayList<>();
    if (transport != Transport.cluster) {
      profiles.add(transport.name());
    }
    profiles.add("cluster");
    profiles.add(journal.name());
    return profiles;
  }

  /**
   * The settings these options give on top of the profiles: the TLS directory and the DNS server,
   * where given.
   */
  Map<String, Object> overrides() {
    Map<String, Object> out = new HashMap<>();
    if (tlsDir != null) {
      if (transport != Transport.tls) {
        throw new IllegalArgumentException("--tls-dir needs --profile tls");
      }
      out.put("tensorcache.security.tls.dir", tlsDir.toAbsolutePath().normalize().toString());
    }
    if (dnsServer != null) {
      if (DnsSeeds.parse(seeds).isEmpty()) {
        throw new IllegalArgumentException("--dns-server needs --seeds dns:NAME[:PORT]");
      }
      HostPort server = HostPort.parse(dnsServer.trim(), "--dns-server");
      out.put(DiscoverySettings.PATH + ".dns-server", server.toString());
    }
    return out;
  }
}
