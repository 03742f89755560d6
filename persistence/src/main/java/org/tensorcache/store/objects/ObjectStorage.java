package org.tensorcache.store.objects;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.segment.SegmentCodec;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;
import software.amazon.awssdk.auth.credentials.AwsCredentialsProvider;
import software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider;
import software.amazon.awssdk.awscore.retry.AwsRetryStrategy;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.LegacyMd5Plugin;
import software.amazon.awssdk.services.s3.S3Client;
import software.amazon.awssdk.services.s3.S3ClientBuilder;

/**
 * A node's connection to object storage: one S3 client (and its connection pool) shared by the
 * segment stores of all caches, with the retry window of its settings. Thread-safe; close it when
 * the node stops.
 */
public final class ObjectStorage implements AutoCloseable {
  private final ObjectStoreSettings settings;
  private final S3Client client;
  private final DefaultCredentialsProvider ownCredentials; // null when the caller's
  private final Retry retry;

  private ObjectStorage(
      ObjectStoreSettings settings, S3Client client, DefaultCredentialsProvider ownCredentials) {
    this.settings = settings;
    this.client = client;
    this.ownCredentials = ownCredentials;
    this.retry =
        new Retry(
            settings.endpoint().map(Object::toString).orElse("AWS S3 in " + settings.region()),
            settings.retryWindow(),
            settings.firstBackoff(),
            settings.maxBackoff());
  }

  /** Connects with credentials from the AWS default chain (nothing is sent until a request). */
  public static ObjectStorage open(ObjectStoreSettings settings) {
    DefaultCredentialsProvider credentials = DefaultCredentialsProvider.builder().build();
    return new ObjectStorage(settings, client(settings, credentials), credentials);
  }

  /** Connects with {@code credentials}, which the caller keeps and closes. */
  public static ObjectStorage open(
      ObjectStoreSettings settings, AwsCredentialsProvider credentials) {
    return new ObjectStorage(settings, client(settings, credentials), null);
  }

  /**
   * The S3 client. Against an S3-compatible server (an endpoint is set) it addresses buckets by
   * path, sends checksums only where an operation requires them, and Content-MD5 where S3 used to
   * require it: the CRC32 trailers the SDK sends by default since 2.30 break such servers. The HTTP
   * client is Apache 5: the URL-connection client reported spurious "Error writing request body"
   * after 412 replies, which a retry would turn into a false "already exists".
   */
  private static S3Client client(ObjectStoreSettings settings, AwsCredentialsProvider credentials) {
    S3ClientBuilder b =
        S3Client.builder()
            .httpClientBuilder(
                Apache5HttpClient.builder()
                    .connectionTimeout(settings.connectTimeout())
                    .socketTimeout(settings.socketTimeout()))
            .region(Region.of(settings.region()))
            .credentialsProvider(credentials)
            .overrideConfiguration(o -> o.retryStrategy(AwsRetryStrategy.doNotRetry()));
    settings
        .endpoint()
        .ifPresent(
            endpoint ->
                b.endpointOverride(endpoint)
                    .forcePathStyle(true)
                    .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                    .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                    .addPlugin(LegacyMd5Plugin.create()));
    return b.build();
  }

  /**
   * The segments of the cache that {@code fingerprint} identifies, kept at {@code location}, with
   * verified local copies in {@code localDir} (created if needed; temporary files that an
   * interrupted download left there are deleted).
   */
  public ObjectSegmentStore<Block> segments(
      ObjectLocation location, Path localDir, CacheSpec spec, Fingerprint fingerprint)
      throws IOException {
    return segments(SegmentCodec.BLOCKS, location, localDir, spec, fingerprint);
  }

  /**
   * Like {@link #segments(ObjectLocation, Path, CacheSpec, Fingerprint)}, as {@code codec} writes
   * them.
   */
  public <V> ObjectSegmentStore<V> segments(
      SegmentCodec<V> codec,
      ObjectLocation location,
      Path localDir,
      CacheSpec spec,
      Fingerprint fingerprint)
      throws IOException {
    return ObjectSegmentStore.open(codec, this, location, localDir, spec, fingerprint);
  }

  /** The settings. */
  public ObjectStoreSettings settings() {
    return settings;
  }

  /** Failed tries of requests so far (each was tried again, or ended its request's window). */
  public long failedAttempts() {
    return retry.failedAttempts();
  }

  /**
   * Why the store counts as unreachable now, or empty: the last try of a request failed with a
   * transient error (no connection, a timeout, a 5xx reply) and nothing has succeeded since.
   */
  public Optional<String> unreachable() {
    return Optional.ofNullable(retry.unreachable());
  }

  /**
   * Asks the store once, without trying again, whether {@code bucket} answers (a HEAD request), and
   * records the outcome for {@link #unreachable}; true when the store replied. For health checks
   * while no segment is read or written.
   */
  public boolean probe(String bucket) {
    try {
      client.headBucket(b -> b.bucket(bucket));
      retry.reached();
      return true;
    } catch (RuntimeException e) {
      if (Retry.isTransient(e)) {
        retry.missed(e);
        return false;
      }
      retry.reached(); // a refusal (no such bucket, denied) is still an answer
      return true;
    }
  }

  S3Client client() {
    return client;
  }

  Retry retry() {
    return retry;
  }

  @Override
  public void close() {
    client.close();
    if (ownCredentials != null) {
      ownCredentials.close();
    }
  }
}
