package org.tensorcache.cli;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.tensorcache.launch.HostPort;
import picocli.CommandLine.Option;

/** How a command reaches the cluster: seed nodes, own host, transport and journal profiles. */
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
      description = "Seed nodes as host:port,... (a node without seeds seeds itself).")
  String seeds;

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

  /** The seed nodes; {@code fallback} when none are given. */
  List<HostPort> seeds(List<HostPort> fallback) {
    List<HostPort> parsed = HostPort.parseList(seeds, "seed");
    return parsed.isEmpty() ? fallback : parsed;
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

  /** The settings these options give on top of the profiles: the TLS directory, if one is given. */
  Map<String, Object> overrides() {
    if (tlsDir == null) {
      return Map.of();
    }
    if (transport != Transport.tls) {
      throw new IllegalArgumentException("--tls-dir needs --profile tls");
    }
    return Map.of("tensorcache.security.tls.dir", tlsDir.toAbsolutePath().normalize().toString());
  }
}
