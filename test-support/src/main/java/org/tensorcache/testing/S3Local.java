package org.tensorcache.testing;

import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.regex.Pattern;

/**
 * A local S3-compatible server for trying {@code --segments s3://...} on one machine ({@code
 * ./tensorcache s3-local}): S3Proxy in the foreground, its objects as plain files under a
 * directory, one bucket made if missing; it prints what to export and pass, and runs until Ctrl-C
 * or SIGTERM, which stop the server.
 */
public final class S3Local {
  private static final Pattern BUCKET = Pattern.compile("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]");

  static final String USAGE =
      """
      Usage: s3-local [--dir DIR] [--port N] [--bucket NAME]
      A local S3-compatible server (S3Proxy) for trying --segments s3://... on one machine; it runs
      until Ctrl-C.
        --dir DIR       where the objects are kept, as plain files under DIR/objects (default data/s3)
        --port N        the port on 127.0.0.1 (default 9000)
        --bucket NAME   the bucket, made if missing (default tensorcache)
        --help          this text
      """;

  /** The options of a run. */
  record Options(Path dir, int port, String bucket, boolean help) {
    /** Parses {@code args}; a bad value throws naming the option and what was expected. */
    static Options parse(List<String> args) {
      Path dir = Path.of("data", "s3");
      int port = 9000;
      String bucket = "tensorcache";
      boolean help = false;
      for (int i = 0; i < args.size(); i++) {
        String option = args.get(i);
        if (option.equals("--help") || option.equals("-h")) {
          help = true;
          continue;
        }
        if (!List.of("--dir", "--port", "--bucket").contains(option)) {
          throw new IllegalArgumentException(
              "unknown option '" + option + "', expected --dir, --port, --bucket or --help");
        }
        if (i + 1 == args.size()) {
          throw new IllegalArgumentException(option + ": a value is missing");
        }
        String value = args.get(++i);
        switch (option) {
          case "--dir" -> dir = Path.of(value);
          case "--port" -> port = port(value);
          default -> bucket = bucket(value);
        }
      }
      return new Options(dir, port, bucket, help);
    }

    private static int port(String value) {
      int port;
      try {
        port = Integer.parseInt(value);
      } catch (NumberFormatException e) {
        port = -1;
      }
      if (port < 1 || port > 65535) {
        throw new IllegalArgumentException("--port " + value + ": expected 1-65535");
      }
      return port;
    }

    private static String bucket(String value) {
      if (!BUCKET.matcher(value).matches()) {
        throw new IllegalArgumentException(
            "--bucket "
                + value
                + ": expected 3-63 lower-case letters, digits, dots or hyphens,"
                + " starting and ending with a letter or digit");
      }
      return value;
    }
  }

  private S3Local() {}

  /** Runs the server until the JVM is told to stop; exit code 2 on a bad option. */
  public static void main(String[] args) throws Exception {
    Options options;
    try {
      options = Options.parse(List.of(args));
    } catch (IllegalArgumentException e) {
      System.err.println("s3-local: " + e.getMessage());
      System.err.print(USAGE);
      System.exit(2);
      return;
    }
    if (options.help()) {
      System.out.print(USAGE);
      return;
    }
    try (ServerSocket probe =
        new ServerSocket(options.port(), 1, InetAddress.getByName("127.0.0.1"))) {
      probe.setReuseAddress(true);
    } catch (IOException e) {
      System.err.println(
          "s3-local: --port "
              + options.port()
              + ": already in use on 127.0.0.1 ("
              + e.getMessage()
              + ")");
      System.exit(1);
      return;
    }
    S3ProxyServer server = S3ProxyServer.start(options.dir(), options.port());
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    server.stop();
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                  stopped.countDown();
                },
                "s3-local-stop"));
    server.createBucket(options.bucket());
    printStarted(System.out, options, server);
    stopped.await();
  }

  /** What a user exports and passes to use the server. */
  static void printStarted(PrintStream out, Options options, S3ProxyServer server) {
    String endpoint = server.endpoint().toString();
    out.println(
        "s3-local: S3Proxy on "
            + endpoint
            + ", objects under "
            + options.dir().resolve("objects")
            + "; bucket "
            + options.bucket());
    out.println(
        "export AWS_ACCESS_KEY_ID="
            + S3ProxyServer.IDENTITY
            + " AWS_SECRET_ACCESS_KEY="
            + S3ProxyServer.CREDENTIAL);
    out.println(
        "./tensorcache fill --local --segments s3://"
            + options.bucket()
            + "/caches --s3-endpoint "
            + endpoint
            + " ...");
    out.println("s3-local: Ctrl-C stops it");
    out.flush();
  }
}
