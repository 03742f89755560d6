package org.tensorcache.testing;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A real S3-compatible server (S3Proxy) in a process of its own, on a free loopback port, keeping
 * objects as plain files under {@code baseDir/bucket/key} (its filesystem backend): for tests,
 * chaos runs and benchmarks on one machine. It can be stopped and started again on the same port
 * and directory; the {@link Reaper} ends it with the JVM. Its jar ({@code
 * org.gaul:s3proxy:4.1.0:jar-with-dependencies}) is found at the system property {@code
 * s3proxy.jar}, else where the build of test-support copies it ({@code target/s3proxy/s3proxy.jar}
 * next to this class's {@code target/classes}, or of the working directory, a module or the
 * repository's root), else in the local Maven repository.
 */
public final class S3ProxyServer implements AutoCloseable {
  /** The access key the server accepts. */
  public static final String IDENTITY = "test-identity";

  /** The secret key the server accepts. */
  public static final String CREDENTIAL = "test-credential";

  private static final String VERSION = "4.1.0";

  /** How long a start may take before the test fails: a cold start took about 8 s here. */
  private static final long START_LIMIT_MS = 90_000;

  private final Path baseDir;
  private final Path logFile;
  private final Path properties;
  private final int port;
  private Process process;

  private S3ProxyServer(Path workDir, int port) throws IOException {
    this.baseDir = Files.createDirectories(workDir.resolve("objects"));
    this.logFile = workDir.resolve("s3proxy.log");
    this.properties = workDir.resolve("s3proxy.properties");
    this.port = port;
    Files.writeString(
        properties,
        String.join(
            "\n",
            "s3proxy.endpoint=" + endpoint(),
            "s3proxy.authorization=aws-v2-or-v4",
            "s3proxy.identity=" + IDENTITY,
            "s3proxy.credential=" + CREDENTIAL,
            "jclouds.provider=filesystem",
            "jclouds.filesystem.basedir=" + baseDir,
            ""));
  }

  /** Starts a server keeping its files under {@code workDir}, and waits until it listens. */
  public static S3ProxyServer start(Path workDir) throws IOException, InterruptedException {
    return start(workDir, freePort());
  }

  /**
   * Starts a server on {@code port} keeping its files under {@code workDir}, and waits until it
   * listens.
   */
  public static S3ProxyServer start(Path workDir, int port)
      throws IOException, InterruptedException {
    S3ProxyServer server = new S3ProxyServer(workDir, port);
    server.start();
    return server;
  }

  /** The server process's pid, while it runs. */
  public long pid() {
    if (process == null) {
      throw new IllegalStateException("S3Proxy on port " + port + " is not running");
    }
    return process.pid();
  }

  /** The credentials' system properties, the first source of the AWS default chain. */
  public static void useAsDefaultCredentials() {
    System.setProperty("aws.accessKeyId", IDENTITY);
    System.setProperty("aws.secretAccessKey", CREDENTIAL);
  }

  /** The server's base URI. */
  public URI endpoint() {
    return URI.create("http://127.0.0.1:" + port);
  }

  /** The file S3Proxy keeps object {@code key} of {@code bucket} in. */
  public Path fileOf(String bucket, String key) {
    return baseDir.resolve(bucket).resolve(key);
  }

  /**
   * Creates bucket {@code bucket} (with the filesystem backend a bucket is a directory under the
   * server's base directory, which it lists on each request).
   */
  public void createBucket(String bucket) throws IOException {
    Files.createDirectories(baseDir.resolve(bucket));
  }

  /** Whether the process runs. */
  public boolean running() {
    return process != null && process.isAlive();
  }

  /** Starts the process (again) and waits until its port accepts connections. */
  public void start() throws IOException, InterruptedException {
    if (running()) {
      return;
    }
    Path jar = jar();
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    process =
        Reaper.start(
            new ProcessBuilder(
                    List.of(
                        java,
                        "-Xmx256m",
                        "-XX:+UseSerialGC",
                        "-XX:TieredStopAtLevel=1",
                        "-jar",
                        jar.toString(),
                        "--properties",
                        properties.toString()))
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile())));
    long limit = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(START_LIMIT_MS);
    while (!accepts()) {
      if (!process.isAlive() || System.nanoTime() > limit) {
        String log = Files.exists(logFile) ? Files.readString(logFile, StandardCharsets.UTF_8) : "";
        stop();
        throw new IllegalStateException(
            "S3Proxy did not start listening on port " + port + "; its output:\n" + log);
      }
      Thread.sleep(100);
    }
  }

  /** Stops the process and waits until it is gone. */
  public void stop() throws InterruptedException {
    if (process == null) {
      return;
    }
    process.destroy();
    if (!process.waitFor(20, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
    }
    process = null;
  }

  @Override
  public void close() throws InterruptedException {
    stop();
  }

  private boolean accepts() {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", port), 500);
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static Path jar() {
    return findJar()
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "S3Proxy jar not found at "
                        + candidates()
                        + ": the build of test-support (mvn -pl test-support package) copies it"));
  }

  /**
   * S3Proxy's jar, when it is on this machine (see the class comment for where it is looked for).
   */
  public static Optional<Path> findJar() {
    return candidates().stream().filter(Files::isRegularFile).findFirst();
  }

  private static List<Path> candidates() {
    String configured = System.getProperty("s3proxy.jar");
    if (configured != null) {
      return List.of(Path.of(configured));
    }
    List<Path> paths = new ArrayList<>();
    paths.add(Path.of("target", "s3proxy", "s3proxy.jar"));
    besideClasses().ifPresent(paths::add);
    paths.add(Path.of("..", "test-support", "target", "s3proxy", "s3proxy.jar"));
    paths.add(Path.of("test-support", "target", "s3proxy", "s3proxy.jar"));
    paths.add(
        Path.of(
            System.getProperty("user.home"),
            ".m2/repository/org/gaul/s3proxy",
            VERSION,
            "s3proxy-" + VERSION + "-jar-with-dependencies.jar"));
    return paths;
  }

  /** {@code target/s3proxy/s3proxy.jar} beside the {@code target/classes} this class came from. */
  private static Optional<Path> besideClasses() {
    try {
      Path code =
          Path.of(S3ProxyServer.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      return Optional.of(code.getParent().resolve("s3proxy").resolve("s3proxy.jar"));
    } catch (java.net.URISyntaxException | RuntimeException e) {
      return Optional.empty();
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
      s.setReuseAddress(true);
      return s.getLocalPort();
    }
  }
}
