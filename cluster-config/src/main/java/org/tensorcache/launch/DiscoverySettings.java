package org.tensorcache.launch;

import com.typesafe.config.Config;
import java.time.Duration;
import java.util.Optional;

/**
 * How a member finds the cluster through {@code --seeds dns:NAME}, read once from {@value #PATH}.
 *
 * @param dnsServer the DNS server asked; empty: the system's resolver
 * @param resolveInterval how often the name is resolved again until this member has joined
 * @param stableMargin how long the name's addresses must stay the same before a member forms a
 *     cluster
 * @param requiredContacts how many addresses the name must have before a member forms a cluster
 */
public record DiscoverySettings(
    Optional<HostPort> dnsServer,
    Duration resolveInterval,
    Duration stableMargin,
    int requiredContacts) {

  /** Config path of these settings. */
  public static final String PATH = "tensorcache.discovery";

  /** Checks the values. */
  public DiscoverySettings {
    if (resolveInterval.isNegative() || resolveInterval.isZero()) {
      throw new IllegalArgumentException(
          PATH + ".resolve-interval = " + resolveInterval + " must be positive");
    }
    if (stableMargin.isNegative()) {
      throw new IllegalArgumentException(
          PATH + ".stable-margin = " + stableMargin + " must not be negative");
    }
    if (requiredContacts < 1) {
      throw new IllegalArgumentException(
          PATH + ".required-contacts = " + requiredContacts + " must be at least 1");
    }
  }

  /** Reads the settings from {@code config}, which must contain {@value #PATH}. */
  public static DiscoverySettings fromConfig(Config config) {
    Config c = config.getConfig(PATH);
    String server = c.getString("dns-server").trim();
    return new DiscoverySettings(
        server.isEmpty()
            ? Optional.empty()
            : Optional.of(HostPort.parse(server, PATH + ".dns-server")),
        c.getDuration("resolve-interval"),
        c.getDuration("stable-margin"),
        c.getInt("required-contacts"));
  }
}
