package org.tensorcache.chaostests;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.tensorcache.testing.S3ProxyServer;

/**
 * The object storage of the runs without a shared disk: a real S3-compatible server (S3Proxy) in a
 * process of its own, one bucket, segments under one prefix. It can be stopped and started again on
 * the same port and files, as an outage of the store.
 */
final class ObjectStore implements AutoCloseable {
  static final String BUCKET = "chaos-segments";
  private static final String PREFIX = "cloud";

  private final S3ProxyServer server;

  private ObjectStore(S3ProxyServer server) {
    this.server = server;
  }

  /** Starts the server with its files under {@code dir} and makes the bucket. */
  static ObjectStore start(Path dir) throws IOException, InterruptedException {
    S3ProxyServer server = S3ProxyServer.start(dir);
    server.createBucket(BUCKET);
    // this JVM's members read segments through the default credential chain too
    S3ProxyServer.useAsDefaultCredentials();
    return new ObjectStore(server);
  }

  /** The options that make a node keep its segments here. */
  List<String> nodeArgs() {
    return List.of(
        "--segments",
        "s3://" + BUCKET + "/" + PREFIX,
        "--s3-endpoint",
        server.endpoint().toString());
  }

  /** What a node process needs in its environment to be let in. */
  Map<String, String> env() {
    return Map.of(
        "AWS_ACCESS_KEY_ID", S3ProxyServer.IDENTITY,
        "AWS_SECRET_ACCESS_KEY", S3ProxyServer.CREDENTIAL);
  }

  /**
   * The directory the server keeps the objects under the prefix in, one plain file per object
   * (S3Proxy's filesystem backend): a {@code --segments} directory over the same segments, for
   * checks that read them without going through the server.
   */
  Path directory() {
    return server.fileOf(BUCKET, PREFIX);
  }

  /** Stops the server: every request fails until {@link #start()}. */
  void stop() throws InterruptedException {
    server.stop();
  }

  /** Starts the server again on the same port and files. */
  void start() throws IOException, InterruptedException {
    server.start();
  }

  @Override
  public void close() throws InterruptedException {
    server.close();
  }
}
