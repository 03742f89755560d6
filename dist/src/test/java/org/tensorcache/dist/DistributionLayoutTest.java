package org.tensorcache.dist;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.dist.Unpacked.Result;

/**
 * What the archive holds and how its launcher starts: lib/ is the command line's whole class path
 * and nothing of the tests; {@code --help} runs through symlinks from any directory; bench and
 * chaos, a Java before 17 and no Java at all are refused, each with a line that says so; the Python
 * tools run from scripts/ with the client sources beside them.
 */
class DistributionLayoutTest {
  @TempDir static Path dir;
  private static Unpacked dist;

  @BeforeAll
  static void unpack() throws Exception {
    dist = Unpacked.unpack(dir);
  }

  @Test
  void libHoldsTheCommandLineWithItsNativeLibraryAndNothingOfTheTests() throws Exception {
    String version = System.getProperty("dist.name").substring("tensorcache-".length());
    Set<String> jars = names(dist.home.resolve("lib"));
    for (String module :
        List.of("cluster-config", "actors", "persistence", "model-runner", "fields")) {
      assertTrue(jars.contains(module + "-" + version + ".jar"), module + " missing in " + jars);
    }
    for (String prefix : List.of("pytorch-native-", "pytorch-jni-", "picocli-", "logback")) {
      assertTrue(jars.stream().anyMatch(j -> j.startsWith(prefix)), prefix + "* missing " + jars);
    }
    for (String prefix : List.of("junit", "archunit", "jqwik", "pekko-actor-testkit", "bench-")) {
      assertFalse(jars.stream().anyMatch(j -> j.startsWith(prefix)), prefix + "* in " + jars);
    }
    assertEquals(
        Set.of(
            "dataset_messages.py",
            "dataset_source.py",
            "dataset_tokens.py",
            "export_hf_model.py",
            "hf_export",
            "prepare_dataset.py"),
        names(dist.home.resolve("scripts")));
    assertEquals(
        Set.of("__init__.py", "load.py", "metadata.py", "split.py", "trace.py"),
        names(dist.home.resolve("scripts/hf_export")));
    assertTrue(Files.isRegularFile(dist.home.resolve("python/tensorcache/digests.py")));
    assertTrue(Files.isRegularFile(dist.home.resolve("python/pyproject.toml")));
    assertFalse(Files.exists(dist.home.resolve("python/tests")), "the client's tests shipped");
    assertTrue(Files.isExecutable(dist.home.resolve("bin/tensorcache")));
    assertTrue(Files.readString(dist.home.resolve("README")).startsWith("TensorCache " + version));
  }

  @Test
  void helpRunsThroughSymlinksFromAnotherDirectoryWithJavaOnThePath() throws Exception {
    Path links = Files.createDirectories(dir.resolve("links"));
    Path relative = links.resolve("tc");
    Files.createSymbolicLink(relative, links.relativize(dist.home.resolve("bin/tensorcache")));
    Path chained = Files.createSymbolicLink(links.resolve("tc2"), relative);
    Path elsewhere = Files.createDirectories(dir.resolve("elsewhere"));
    ProcessBuilder pb =
        dist.bare(new ProcessBuilder(chained.toString(), "--help"), elsewhere, log());
    pb.environment().remove("JAVA_HOME");
    pb.environment().put("PATH", System.getProperty("java.home") + "/bin:/usr/bin:/bin");
    Result help = Unpacked.run(pb, Duration.ofSeconds(60));

    assertEquals(0, help.exit(), help.output());
    assertTrue(help.output().contains("Usage: tensorcache"), help.output());
    assertTrue(help.output().contains("export"), help.output());
    assertTrue(help.output().contains("bench and chaos are not part of it"), help.output());
    assertTrue(help.output().contains("Installed in " + dist.home.toRealPath()), help.output());
    assertFalse(help.output().contains("The launcher also runs"), help.output());
  }

  @Test
  void benchAndChaosAreRefusedAsNotPartOfTheDistribution() throws Exception {
    for (String command : List.of("bench", "chaos")) {
      Result r = Unpacked.run(dist.launcher(dir, log(), command), Duration.ofSeconds(60));
      assertEquals(2, r.exit(), r.output());
      assertTrue(r.output().contains(command + " is not part of this distribution"), r.output());
    }
  }

  @Test
  void aJavaBefore17IsRefusedNamingItsVersion() throws Exception {
    Map<String, String> versions =
        Map.of(
            "11.0.22",
            "openjdk version \"11.0.22\" 2024-01-16",
            "1.8.0_392",
            "java version \"1.8.0_392\"");
    for (Map.Entry<String, String> v : versions.entrySet()) {
      Path javaHome = dir.resolve("java-" + v.getKey());
      Path java = Files.createDirectories(javaHome.resolve("bin")).resolve("java");
      Files.writeString(java, "#!/bin/sh\necho '" + v.getValue() + "' >&2\n");
      assertTrue(java.toFile().setExecutable(true));
      ProcessBuilder pb = dist.launcher(dir, log(), "--help");
      pb.environment().put("JAVA_HOME", javaHome.toString());
      Result r = Unpacked.run(pb, Duration.ofSeconds(60));
      assertEquals(1, r.exit(), r.output());
      assertTrue(r.output().contains("needs Java 17 or newer"), r.output());
      assertTrue(r.output().contains("'" + v.getKey() + "'"), r.output());
    }
  }

  @Test
  void withoutJavaTheLauncherSaysWhereItLooked() throws Exception {
    // only the tools the launcher uses, so that no java is on PATH
    Path tools = Files.createDirectories(dir.resolve("tools"));
    for (String tool : List.of("bash", "dirname", "readlink", "sed", "head", "awk", "cat")) {
      Files.createSymbolicLink(tools.resolve(tool), Path.of("/usr/bin", tool));
    }
    ProcessBuilder pb = dist.launcher(dir, log(), "--help");
    pb.environment().remove("JAVA_HOME");
    pb.environment().put("PATH", tools.toString());
    Result none = Unpacked.run(pb, Duration.ofSeconds(60));
    assertEquals(1, none.exit(), none.output());
    assertTrue(none.output().contains("no Java found"), none.output());

    pb = dist.launcher(dir, log(), "--help");
    pb.environment().put("JAVA_HOME", dir.resolve("no-such-java").toString());
    Result missing = Unpacked.run(pb, Duration.ofSeconds(60));
    assertEquals(1, missing.exit(), missing.output());
    assertTrue(missing.output().contains("no-such-java has no bin/java"), missing.output());
  }

  @Test
  void thePythonToolsRunFromScriptsWithTheClientBesideThem() throws Exception {
    // the Python a user runs the tools with: python3 on this PATH, with its packages
    Path python =
        Stream.of(System.getenv().getOrDefault("PATH", "").split(":"))
            .map(d -> Path.of(d, "python3"))
            .filter(Files::isExecutable)
            .findFirst()
            .orElse(null);
    Assumptions.assumeFalse(Boolean.getBoolean("dist.python.skip"), "-Dpython.skip=true");
    assertTrue(python != null, "no python3 on PATH; -Dpython.skip=true leaves the Python out");
    for (String script : List.of("prepare_dataset.py", "export_hf_model.py")) {
      // both import tensorcache.digests, from ../python when no client is installed
      ProcessBuilder pb =
          new ProcessBuilder(
                  python.toString(),
                  dist.home.resolve("scripts").resolve(script).toString(),
                  "--help")
              .directory(dir.toFile())
              .redirectErrorStream(true)
              .redirectOutput(log().toFile());
      pb.environment().remove("PYTHONPATH");
      pb.environment().put("PYTHONDONTWRITEBYTECODE", "1");
      Result r = Unpacked.run(pb, Duration.ofSeconds(120));
      assertEquals(0, r.exit(), r.output());
      assertTrue(r.output().contains("usage: " + script), r.output());
    }
  }

  private static Path log() throws Exception {
    return Files.createTempFile(dir, "run", ".log");
  }

  private static Set<String> names(Path directory) throws Exception {
    try (Stream<Path> files = Files.list(directory)) {
      return files
          .map(p -> p.getFileName().toString())
          .collect(Collectors.toCollection(TreeSet::new));
    }
  }
}
