package org.tensorcache.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.typesafe.config.ConfigFactory;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class DiscoverySettingsTest {
  @Test
  void theDefaultsAskTheSystemsResolverEverySecond() {
    DiscoverySettings d = DiscoverySettings.fromConfig(ConfigFactory.defaultReference());
    assertEquals(Optional.empty(), d.dnsServer());
    assertEquals(Duration.ofSeconds(1), d.resolveInterval());
    assertEquals(Duration.ofSeconds(5), d.stableMargin());
    assertEquals(1, d.requiredContacts());
  }

  @Test
  void aServerAndBadValues() {
    DiscoverySettings d =
        DiscoverySettings.fromConfig(
            ConfigFactory.parseString("tensorcache.discovery.dns-server = \"127.0.0.1:5353\"")
                .withFallback(ConfigFactory.defaultReference()));
    assertEquals(Optional.of(new HostPort("127.0.0.1", 5353)), d.dnsServer());
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                DiscoverySettings.fromConfig(
                    ConfigFactory.parseString("tensorcache.discovery.required-contacts = 0")
                        .withFallback(ConfigFactory.defaultReference())));
    assertEquals("tensorcache.discovery.required-contacts = 0 must be at least 1", e.getMessage());
    e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                DiscoverySettings.fromConfig(
                    ConfigFactory.parseString("tensorcache.discovery.dns-server = resolver")
                        .withFallback(ConfigFactory.defaultReference())));
    assertEquals(
        "tensorcache.discovery.dns-server 'resolver' is not host:port, expected e.g."
            + " 127.0.0.1:25520",
        e.getMessage());
  }
}
