package org.tensorcache.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code s3-local}: its options, and a started one taking a PUT and a GET until SIGTERM. */
class S3LocalTest {
  @TempDir Path dir;

  @Test
  void helpPrintsTheUsageAndStartsNothing() throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    PrintStream original = System.out;
    System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
    try {
      S3Local.main(new String[] {"--dir", dir.resolve("s3").toString(), "--help"});
    } finally {
      System.setOut(original);
    }
    assertTrue(out.toString(StandardCharsets.UTF_8).startsWith("Usage: s3-local"), out.toString());
    assertFalse(Files.exists(dir.resolve("s3")), "--help made the directory");
  }

  @Test
  void badValuesAreRefusedNamingTheOption() {
    IllegalArgumentException port =
        assertThrows(
            IllegalArgumentException.class,
            () -> S3Local.Options.parse(List.of("--port", "70000")));
    assertEquals("--port 70000: expected 1-65535", port.getMessage());
    IllegalArgumentException bucket =
        assertThrows(
            IllegalArgumentException.class, () -> S3Local.Options.parse(List.of("--bucket", "A")));
    assertTrue(bucket.getMessage().startsWith("--bucket A: expected"), bucket.getMessage());
    assertThrows(IllegalArgumentException.class, () -> S3Local.Options.parse(List.of("--dir")));
  }

  @Test
  void aStartedServerKeepsAnObjectUntilSigterm() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0)) {
      port = s.getLocalPort();
    }
    Path s3 = dir.resolve("s3");
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process p =
        new ProcessBuilder(
                java,
                "-cp",
                System.getProperty("java.class.path"),
                S3Local.class.getName(),
                "--dir",
                s3.toString(),
                "--port",
                Integer.toString(port),
                "--bucket",
                "try-it")
            .redirectError(dir.resolve("s3-local.err").toFile())
            .start();
    try {
      List<String> lines = new ArrayList<>();
      BufferedReader out =
          new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
      for (String line = out.readLine(); line != null; line = out.readLine()) {
        lines.add(line);
        if (line.contains("Ctrl-C")) {
          break;
        }
      }
      String endpoint = "http://127.0.0.1:" + port;
      assertEquals(
          "s3-local: S3Proxy on "
              + endpoint
              + ", objects under "
              + s3.resolve("objects")
              + "; bucket try-it",
          lines.get(0),
          String.join("\n", lines) + Files.readString(dir.resolve("s3-local.err")));
      assertEquals(
          "export AWS_ACCESS_KEY_ID=test-identity AWS_SECRET_ACCESS_KEY=test-credential",
          lines.get(1));
      assertEquals(
          "./tensorcache fill --local --segments s3://try-it/caches --s3-endpoint "
              + endpoint
              + " ...",
          lines.get(2));

      HttpClient http = HttpClient.newHttpClient();
      HttpResponse<String> put =
          http.send(
              signed("PUT", endpoint, "/try-it/a/key", "text/plain")
                  .PUT(HttpRequest.BodyPublishers.ofString("hello"))
                  .build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(200, put.statusCode(), put.body());
      HttpResponse<String> get =
          http.send(
              signed("GET", endpoint, "/try-it/a/key", "").GET().build(),
              HttpResponse.BodyHandlers.ofString());
      assertEquals(200, get.statusCode(), get.body());
      assertEquals("hello", get.body());
      assertEquals("hello", Files.readString(s3.resolve("objects/try-it/a/key")));

      new ProcessBuilder("kill", "-s", "TERM", Long.toString(p.pid())).start().waitFor();
      assertTrue(p.waitFor(30, TimeUnit.SECONDS), "s3-local did not end on SIGTERM");
      assertFalse(accepts(port), "S3Proxy still listens on " + port + " after s3-local ended");
    } finally {
      p.descendants().forEach(ProcessHandle::destroyForcibly);
      p.destroyForcibly();
    }
  }

  /** A request signed with AWS signature version 2, which S3Proxy takes (aws-v2-or-v4). */
  private static HttpRequest.Builder signed(
      String verb, String endpoint, String resource, String contentType) throws Exception {
    String date = DateTimeFormatter.RFC_1123_DATE_TIME.format(ZonedDateTime.now(ZoneOffset.UTC));
    String toSign = verb + "\n\n" + contentType + "\n\n" + "x-amz-date:" + date + "\n" + resource;
    Mac mac = Mac.getInstance("HmacSHA1");
    mac.init(
        new SecretKeySpec(S3ProxyServer.CREDENTIAL.getBytes(StandardCharsets.UTF_8), "HmacSHA1"));
    String signature =
        Base64.getEncoder().encodeToString(mac.doFinal(toSign.getBytes(StandardCharsets.UTF_8)));
    HttpRequest.Builder b =
        HttpRequest.newBuilder(URI.create(endpoint + resource))
            .header("x-amz-date", date)
            .header("Authorization", "AWS " + S3ProxyServer.IDENTITY + ":" + signature);
    if (!contentType.isEmpty()) {
      b.header("Content-Type", contentType);
    }
    return b;
  }

  private static boolean accepts(int port) {
    try (Socket s = new Socket("127.0.0.1", port)) {
      return true;
    } catch (java.io.IOException e) {
      return false;
    }
  }
}
