package org.tensorcache.cli;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.tensorcache.launch.OptionRanges;
import org.tensorcache.launch.tls.ClusterCertificates;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * Makes the certificates of a TLS cluster: a cluster CA and a certificate per node (Artery, and the
 * server side of the lookup port), a client CA and a certificate per lookup-port client.
 */
@Command(
    name = "certs",
    mixinStandardHelpOptions = true,
    description =
        "Make the certificates of a TLS cluster (--profile tls) and of the lookup port's"
            + " clients, as PEM files under --out.",
    footer = {
      "",
      "Files under --out:",
      "  ca.crt, ca.key        the cluster CA (ca.key signs nodes: keep it off them)",
      "  client-ca.crt, .key   the CA of the lookup port's clients",
      "  nodes/<host>/         node.key node.crt ca.crt client-ca.crt",
      "  clients/<name>/       client.key client.crt ca.crt",
      "Copy nodes/<host>/ to that node and start it with",
      "  --profile tls --tls-dir <that directory> --host <host>",
      "A CA already in --out is reused (to add nodes or clients later). Existing",
      "files are replaced only with --force. Keys: RSA, unencrypted PKCS#8, mode 600."
    })
final class CertsCommand implements Callable<Integer> {
  @Option(
      names = "--out",
      required = true,
      paramLabel = "DIR",
      description = "Directory to write to (made if missing).")
  Path out;

  @Option(
      names = "--nodes",
      required = true,
      split = ",",
      paramLabel = "HOST",
      description =
          "The nodes' hosts as other members reach them (their --host): IP addresses or DNS"
              + " names, comma-separated.")
  List<String> nodes;

  @ArgGroup(exclusive = true)
  Clients clients;

  /** Lookup-port clients: a count or names. */
  static final class Clients {
    @Option(
        names = "--clients",
        paramLabel = "N",
        description = "Make N client certificates, named client-1 .. client-N.")
    Integer count;

    @Option(
        names = "--client",
        split = ",",
        paramLabel = "NAME",
        description = "Make client certificates with these names, comma-separated.")
    List<String> names;
  }

  @Option(
      names = "--days",
      defaultValue = "365",
      paramLabel = "D",
      description = "Validity of node and client certificates in days (default: ${DEFAULT-VALUE}).")
  int days;

  @Option(
      names = "--ca-days",
      defaultValue = "3650",
      paramLabel = "D",
      description = "Validity of new CAs in days (default: ${DEFAULT-VALUE}).")
  int caDays;

  @Option(
      names = "--cluster-name",
      defaultValue = "tensorcache",
      paramLabel = "NAME",
      description =
          "The common name of every node certificate: Pekko accepts a peer only if its certificate"
              + " shares a name with its own (default: ${DEFAULT-VALUE}).")
  String clusterName;

  @Option(
      names = "--key-bits",
      defaultValue = "2048",
      paramLabel = "BITS",
      description = "RSA key size (default: ${DEFAULT-VALUE}).")
  int keyBits;

  @Option(names = "--force", description = "Replace existing node and client files.")
  boolean force;

  @Override
  public Integer call() throws Exception {
    OptionRanges.atLeast("--days", days, 1);
    OptionRanges.atLeast("--ca-days", caDays, 1);
    OptionRanges.between("--key-bits", keyBits, 2048, 8192);
    ClusterCertificates.Request request =
        new ClusterCertificates.Request(
            out,
            nodes.stream().map(String::trim).toList(),
            clientNames(),
            clusterName,
            days,
            caDays,
            keyBits,
            force);
    ClusterCertificates.Result result = ClusterCertificates.write(request, Instant.now());
    for (String ca : result.reused()) {
      System.out.println("reused " + ca);
    }
    for (ClusterCertificates.Written w : result.written()) {
      System.out.printf("wrote  %s  %s%n", w.file(), w.what());
    }
    System.out.printf(
        "next: copy %s to each node and start it with --profile tls --tls-dir <that directory>"
            + " --host <its host>%n",
        ClusterCertificates.nodeDir(out, "<host>"));
    return 0;
  }

  private List<String> clientNames() {
    List<String> names = new ArrayList<>();
    if (clients == null) {
      return names;
    }
    if (clients.count != null) {
      OptionRanges.atLeast("--clients", clients.count, 0);
      for (int i = 1; i <= clients.count; i++) {
        names.add("client-" + i);
      }
      return names;
    }
    return clients.names.stream().map(String::trim).toList();
  }
}
