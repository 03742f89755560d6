package org.tensorcache.store.objects;

import com.typesafe.config.Config;
import java.net.URI;
import java.time.Duration;
import java.util.Optional;

/**
 * How a node reaches object storage: the endpoint of an S3-compatible server (empty for AWS S3
 * itself), the region, how long a failing request is retried, the socket timeouts and the page size
 * of listings. Credentials are not here: they come from the AWS default chain (system properties,
 * environment, web identity, profile, container or instance role).
 *
 * @param endpoint the server's base URI ({@code http://host:port}); empty for AWS S3
 * @param region the region requests are signed for; S3-compatible servers take any
 * @param retryWindow how long a request that fails with a transient error (connection refused, a
 *     timeout, 5xx, throttling) is tried again before it fails for good; no try starts after it, so
 *     a request takes at most this plus one try (bounded by the timeouts)
 * @param firstBackoff the wait after the first failure; each next wait doubles, with jitter
 * @param maxBackoff the longest wait between two tries
 * @param connectTimeout how long opening a connection may take
 * @param socketTimeout how long a connection may stay silent in the middle of a request
 * @param listPageSize keys per listing request (S3's {@code max-keys}, 1 to 1000)
 */
public record ObjectStoreSettings(
    Optional<URI> endpoint,
    String region,
    Duration retryWindow,
    Duration firstBackoff,
    Duration maxBackoff,
    Duration connectTimeout,
    Duration socketTimeout,
    int listPageSize) {
  /** The region when none is configured and {@code AWS_REGION} is not set. */
  public static final String DEFAULT_REGION = "us-east-1";

  /** Checks the values, naming the one that is out of bounds. */
  public ObjectStoreSettings {
    endpoint.ifPresent(ObjectStoreSettings::checkEndpoint);
    if (region.isBlank()) {
      throw new IllegalArgumentException("region '" + region + "' expected to be non-empty");
    }
    positive("retry window", retryWindow);
    positive("first backoff", firstBackoff);
    positive("connect timeout", connectTimeout);
    positive("socket timeout", socketTimeout);
    if (maxBackoff.compareTo(firstBackoff) < 0) {
      throw new IllegalArgumentException(
          "max backoff "
              + maxBackoff
              + " expected to be at least the first backoff "
              + firstBackoff);
    }
    if (listPageSize < 1 || listPageSize > 1000) {
      throw new IllegalArgumentException(
          "list page size " + listPageSize + " out of range [1, 1000]");
    }
  }

  /**
   * AWS S3 in the region of {@code AWS_REGION} (else {@value #DEFAULT_REGION}), requests retried
   * for a minute from 200 ms waits up to 5 s, pages of 1000 keys.
   */
  public static ObjectStoreSettings defaults() {
    String region = System.getenv("AWS_REGION");
    return new ObjectStoreSettings(
        Optional.empty(),
        region == null || region.isBlank() ? DEFAULT_REGION : region,
        Duration.ofMinutes(1),
        Duration.ofMillis(200),
        Duration.ofSeconds(5),
        Duration.ofSeconds(5),
        Duration.ofSeconds(60),
        1000);
  }

  /**
   * The settings under {@code tensorcache.object-storage} of {@code config} (see the module's
   * reference.conf); an empty endpoint means AWS S3.
   */
  public static ObjectStoreSettings fromConfig(Config config) {
    Config c = config.getConfig("tensorcache.object-storage");
    String endpoint = c.getString("endpoint");
    return new ObjectStoreSettings(
        endpoint.isBlank() ? Optional.empty() : Optional.of(URI.create(endpoint)),
        c.getString("region"),
        c.getDuration("retry-window"),
        c.getDuration("first-backoff"),
        c.getDuration("max-backoff"),
        c.getDuration("connect-timeout"),
        c.getDuration("socket-timeout"),
        c.getInt("list-page-size"));
  }

  /** These settings against the S3-compatible server at {@code endpoint}. */
  public ObjectStoreSettings withEndpoint(URI endpoint) {
    return new ObjectStoreSettings(
        Optional.of(endpoint),
        region,
        retryWindow,
        firstBackoff,
        maxBackoff,
        connectTimeout,
        socketTimeout,
        listPageSize);
  }

  /** These settings in region {@code region}. */
  public ObjectStoreSettings withRegion(String region) {
    return new ObjectStoreSettings(
        endpoint,
        region,
        retryWindow,
        firstBackoff,
        maxBackoff,
        connectTimeout,
        socketTimeout,
        listPageSize);
  }

  /** These settings retrying for {@code window}, waiting {@code first} then up to {@code max}. */
  public ObjectStoreSettings withRetry(Duration window, Duration first, Duration max) {
    return new ObjectStoreSettings(
        endpoint, region, window, first, max, connectTimeout, socketTimeout, listPageSize);
  }

  /** These settings listing {@code keys} keys per request. */
  public ObjectStoreSettings withListPageSize(int keys) {
    return new ObjectStoreSettings(
        endpoint,
        region,
        retryWindow,
        firstBackoff,
        maxBackoff,
        connectTimeout,
        socketTimeout,
        keys);
  }

  private static void checkEndpoint(URI endpoint) {
    String scheme = endpoint.getScheme();
    if (!("http".equals(scheme) || "https".equals(scheme)) || endpoint.getHost() == null) {
      throw new IllegalArgumentException(
          "object storage endpoint '" + endpoint + "' expected to be http(s)://host[:port]");
    }
  }

  private static void positive(String what, Duration d) {
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(what + " " + d + " expected to be positive");
    }
  }
}
