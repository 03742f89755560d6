package org.tensorcache.chaostests;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.OptionalDouble;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a node process serves to operators, on the ports its {@code node up:} line names (it is
 * started with {@code --management-port 0 --metrics-port 0}): {@code /ready} and Prometheus
 * metrics.
 */
final class NodeOps {
  /** The options that make a node serve both on free ports. */
  static final java.util.List<String> ARGS =
      java.util.List.of("--management-port", "0", "--metrics-port", "0");

  private static final Pattern UP =
      Pattern.compile("node up: .* management=[^:\\s]+:(\\d+) metrics=[^:\\s]+:(\\d+)");
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  private final int management;
  private final int metrics;

  private NodeOps(int management, int metrics) {
    this.management = management;
    this.metrics = metrics;
  }

  /** The ports of {@code n}, which must have printed its {@code node up:} line. */
  static NodeOps of(NodeProcess n) throws IOException {
    Matcher m = UP.matcher(n.logText());
    if (!m.find()) {
      throw new IllegalStateException(
          n.name() + " printed no 'node up: ... management=H:P metrics=H:P' (" + n.log() + ")");
    }
    return new NodeOps(Integer.parseInt(m.group(1)), Integer.parseInt(m.group(2)));
  }

  /** The status {@code /ready} answers with; -1 when nothing answers. */
  int ready() throws InterruptedException {
    try {
      return HTTP.send(request(management, "/ready"), HttpResponse.BodyHandlers.discarding())
          .statusCode();
    } catch (IOException e) {
      return -1;
    }
  }

  /**
   * The value of the sample of metric {@code name} whose labels contain {@code labels} (e.g. {@code
   * bucket="chaos"}, or "" for the first); empty when the metrics do not answer or have none.
   */
  OptionalDouble metric(String name, String labels) throws InterruptedException {
    String text;
    try {
      text = HTTP.send(request(metrics, "/metrics"), HttpResponse.BodyHandlers.ofString()).body();
    } catch (IOException e) {
      return OptionalDouble.empty();
    }
    for (String line : text.split("\n")) {
      if (line.startsWith(name + "{") || line.startsWith(name + " ")) {
        int value = line.lastIndexOf(' ');
        if (line.substring(0, value).contains(labels)) {
          return OptionalDouble.of(Double.parseDouble(line.substring(value + 1).trim()));
        }
      }
    }
    return OptionalDouble.empty();
  }

  private static HttpRequest request(int port, String path) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(5))
        .build();
  }
}
