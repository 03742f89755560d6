package org.tensorcache.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.fasterxml.jackson.dataformat.yaml.YAMLParser;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The Kubernetes manifests under {@code deploy/} use only what exists: every argument of a node
 * container parses as {@code tensorcache node} options, every port they name is the port the node
 * was told to serve on, probes ask the node's health paths, the variables they set are ones the
 * product or the AWS SDK reads, the seed name is the headless service's, and the grace period fits
 * a spot pod's notice.
 */
class DeployManifestsTest {
  private static final Path DEPLOY = Path.of("..", "deploy");
  private static final Pattern VARIABLE = Pattern.compile("\\$\\(([A-Z_]+)\\)");

  /** Variables the AWS SDK's default chains read (credentials, region, endpoint). */
  private static final Set<String> AWS =
      Set.of(
          "AWS_ACCESS_KEY_ID",
          "AWS_SECRET_ACCESS_KEY",
          "AWS_SESSION_TOKEN",
          "AWS_REGION",
          "AWS_ENDPOINT_URL_S3",
          "AWS_ROLE_ARN",
          "AWS_WEB_IDENTITY_TOKEN_FILE");

  @Test
  void everyNodeContainerUsesOptionsPortsPathsAndVariablesThatExist() throws IOException {
    List<JsonNode> docs = documents();
    List<JsonNode> pods =
        docs.stream()
            .filter(d -> d.path("spec").path("template").path("spec").has("containers"))
            .toList();
    assertFalse(pods.isEmpty(), "no workload with a pod template under " + DEPLOY);
    int nodes = 0;
    for (JsonNode workload : pods) {
      JsonNode pod = workload.path("spec").path("template").path("spec");
      int grace = pod.path("terminationGracePeriodSeconds").asInt(30);
      assertTrue(grace <= 15, "grace period " + grace + " s, expected inside a spot pod's 15 s");
      for (JsonNode container : pod.path("containers")) {
        List<String> args = new ArrayList<>();
        container.path("args").forEach(a -> args.add(a.asText()));
        if (args.isEmpty() || !args.get(0).equals("node")) {
          continue;
        }
        nodes++;
        checkNode(docs, workload, container, args.subList(1, args.size()));
      }
    }
    assertTrue(nodes > 0, "no container runs 'node'");
  }

  private void checkNode(
      List<JsonNode> docs, JsonNode workload, JsonNode container, List<String> args)
      throws IOException {
    Map<String, String> env = new HashMap<>();
    for (JsonNode e : container.path("env")) {
      String name = e.path("name").asText();
      env.put(name, e.has("value") ? e.path("value").asText() : sample(e));
      assertTrue(
          AWS.contains(name) || readByProduct(name) || used(name, args),
          "variable " + name + " is read by neither the product nor the AWS SDK, nor used in args");
    }
    List<String> resolved = args.stream().map(a -> substitute(a, env)).toList();
    NodeCommand node = new NodeCommand();
    new CommandLine(node).parseArgs(resolved.toArray(String[]::new)); // unknown options throw
    NodeCommand.parseRoles(node.roles);
    node.job.segmentPlace(); // a malformed --segments or --s3-* throws

    Map<String, Integer> ports = new HashMap<>();
    for (JsonNode p : container.path("ports")) {
      ports.put(p.path("name").asText(), p.path("containerPort").asInt());
    }
    assertEquals(node.port, ports.get("remoting"), "remoting port against --port");
    assertEquals(node.lookupPort, ports.get("lookup"), "lookup port against --lookup-port");
    assertEquals(node.ops.managementPort, ports.get("management"), "--management-port");
    assertEquals(node.ops.metricsPort, ports.get("metrics"), "--metrics-port");
    JsonNode annotations =
        workload.path("spec").path("template").path("metadata").path("annotations");
    if (annotations.has("prometheus.io/port")) {
      assertEquals(
          String.valueOf(node.ops.metricsPort), annotations.path("prometheus.io/port").asText());
      assertEquals("/metrics", annotations.path("prometheus.io/path").asText());
    }

    Config config = ConfigFactory.load();
    Map<String, String> health =
        Map.of(
            "readinessProbe",
                "/" + config.getString("pekko.management.health-checks.readiness-path"),
            "livenessProbe",
                "/" + config.getString("pekko.management.health-checks.liveness-path"));
    health.forEach(
        (probe, path) -> {
          JsonNode get = container.path(probe).path("httpGet");
          assertEquals(path, get.path("path").asText(), probe);
          assertEquals(node.ops.managementPort, port(get.path("port"), ports), probe + " port");
        });

    String seeds = node.cluster.seeds;
    assertTrue(seeds != null && seeds.startsWith("dns:"), "--seeds " + seeds + ", expected dns:");
    String name = seeds.substring("dns:".length()).split(":")[0];
    JsonNode headless =
        docs.stream()
            .filter(d -> d.path("kind").asText().equals("Service"))
            .filter(d -> name.startsWith(d.path("metadata").path("name").asText() + "."))
            .findFirst()
            .orElseThrow(() -> new AssertionError("no Service named by --seeds " + seeds));
    assertEquals("None", headless.path("spec").path("clusterIP").asText(), "headless service");
    assertTrue(
        headless.path("spec").path("publishNotReadyAddresses").asBoolean(),
        "a starting pod must be found before it is ready");
    for (JsonNode d : docs) {
      if (d.path("kind").asText().equals("Service")) {
        for (JsonNode p : d.path("spec").path("ports")) {
          assertTrue(
              ports.containsKey(p.path("targetPort").asText()),
              "service port targets " + p.path("targetPort") + ", not a container port");
        }
      }
    }
  }

  private static List<JsonNode> documents() throws IOException {
    List<JsonNode> docs = new ArrayList<>();
    ObjectMapper yaml = new ObjectMapper(new YAMLFactory());
    List<Path> files;
    try (Stream<Path> walk = Files.walk(DEPLOY)) {
      files = walk.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
    }
    assertFalse(files.isEmpty(), "no manifests under " + DEPLOY.toAbsolutePath());
    for (Path file : files) {
      try (YAMLParser parser = new YAMLFactory().createParser(file.toFile())) {
        yaml.readValues(parser, JsonNode.class)
            .forEachRemaining(
                d -> {
                  if (d != null && !d.isNull()) {
                    docs.add(d);
                  }
                });
      }
    }
    return docs;
  }

  /** What a variable from the downward API or a secret stands for here. */
  private static String sample(JsonNode e) {
    String field = e.path("valueFrom").path("fieldRef").path("fieldPath").asText("");
    return switch (field) {
      case "status.podIP" -> "10.8.0.5";
      case "metadata.namespace" -> "default";
      default -> "secret";
    };
  }

  private static boolean readByProduct(String name) throws IOException {
    if (name.equals("JAVA_OPTS")) {
      return Files.readString(Path.of("..", "dist", "src", "dist", "bin", "tensorcache"))
          .contains("JAVA_OPTS");
    }
    return Files.readString(
            Path.of("..", "persistence", "src", "main", "resources", "reference.conf"))
        .contains("${?" + name + "}");
  }

  private static boolean used(String name, List<String> args) {
    return args.stream().anyMatch(a -> a.contains("$(" + name + ")"));
  }

  private static String substitute(String arg, Map<String, String> env) {
    Matcher m = VARIABLE.matcher(arg);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      String value = env.get(m.group(1));
      assertTrue(value != null, "argument " + arg + " uses $(" + m.group(1) + "), not defined");
      m.appendReplacement(out, Matcher.quoteReplacement(value));
    }
    return m.appendTail(out).toString();
  }

  private static Integer port(JsonNode port, Map<String, Integer> named) {
    return port.isInt() ? Integer.valueOf(port.asInt()) : named.get(port.asText());
  }
}
