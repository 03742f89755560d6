package org.tensorcache.bench.objects;

import java.net.URI;
import java.nio.file.Path;
import org.tensorcache.testing.S3ProxyServer;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.LegacyMd5Plugin;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * What a user would do without segments: upload and download the same bytes as plain objects with
 * the AWS SDK (the client set up as an S3-compatible server needs it), no conditional create and no
 * checks.
 */
final class PlainObjects implements AutoCloseable {
  private final S3Client client;
  private final String bucket;

  PlainObjects(URI endpoint, String bucket) {
    this.bucket = bucket;
    this.client =
        S3Client.builder()
            .httpClientBuilder(Apache5HttpClient.builder())
            .endpointOverride(endpoint)
            .forcePathStyle(true)
            .region(Region.US_EAST_1)
            .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
            .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
            .addPlugin(LegacyMd5Plugin.create())
            .credentialsProvider(
                StaticCredentialsProvider.create(
                    AwsBasicCredentials.create(S3ProxyServer.IDENTITY, S3ProxyServer.CREDENTIAL)))
            .build();
  }

  /** Uploads {@code file} {@code n} times under {@code prefix}. */
  void putAll(String prefix, Path file, int n) {
    for (int i = 0; i < n; i++) {
      String key = "plain/" + prefix + "/" + i;
      client.putObject(b -> b.bucket(bucket).key(key), RequestBody.fromFile(file));
    }
  }

  /** Downloads every object {@link #putAll} uploaded, as bytes in memory. */
  void getAll(String prefix, int n) {
    long total = 0;
    for (int i = 0; i < n; i++) {
      String key = "plain/" + prefix + "/" + i;
      total += client.getObjectAsBytes(b -> b.bucket(bucket).key(key)).asByteArray().length;
    }
    if (total == 0) {
      throw new IllegalStateException("downloaded nothing under " + prefix);
    }
  }

  @Override
  public void close() {
    client.close();
  }
}
