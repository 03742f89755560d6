package org.tensorcache.dist;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.RemoteLookupClient;
import org.tensorcache.dist.Unpacked.Result;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.export.CacheExport;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;
import org.tensorcache.testing.Reaper;

/**
 * The unpacked archive on its own: from a directory outside the source tree, with the built-in
 * model, a node of {@code bin/tensorcache} comes up, {@code fill} fills its cache, its lookup port
 * serves the values, {@code export} writes the same values with the same recorded inputs, and a
 * SIGTERM ends the node with exit code 0. DJL finds its native library in lib/ alone: HOME is new.
 */
class DistributionRunTest {
  private static final Pattern UP =
      Pattern.compile("node up: .* cache=(\\S+) lookup-port=([^:\\s]+):(\\d+)");
  private static final long[] INDICES = {0, 1, 63, 64, 150, 299};

  @TempDir Path dir;

  @Test
  void aNodeFromTheArchiveFillsServesLookupsAndExports() throws Exception {
    Unpacked dist = Unpacked.unpack(dir);
    Path work = Files.createDirectories(dir.resolve("work"));
    int port = freePort();
    Path nodeLog = dir.resolve("node.log");
    Process node = null;
    try {
      node =
          Reaper.start(
              dist.launcher(
                  work,
                  nodeLog,
                  job(
                      "node",
                      "--host",
                      "127.0.0.1",
                      "--port",
                      Integer.toString(port),
                      "--lookup-port",
                      "0")));
      Matcher up = awaitUp(node, nodeLog, Duration.ofSeconds(240));
      String cacheId = up.group(1);
      InetSocketAddress lookupPort =
          new InetSocketAddress(up.group(2), Integer.parseInt(up.group(3)));

      Result fill =
          Unpacked.run(
              dist.launcher(
                  work,
                  dir.resolve("fill.log"),
                  job("fill", "--seeds", "127.0.0.1:" + port, "--host", "127.0.0.1")),
              Duration.ofSeconds(300));
      assertEquals(0, fill.exit(), "fill:\n" + fill.output());
      assertTrue(fill.output().contains("filled " + cacheId + ": 300 examples"), fill.output());

      Path out = dir.resolve("ref.safetensors");
      Result export =
          Unpacked.run(
              dist.launcher(
                  work, dir.resolve("export.log"), job("export", "--out", out.toString())),
              Duration.ofSeconds(180));
      assertEquals(0, export.exit(), "export:\n" + export.output());
      assertTrue(export.output().contains("exported " + cacheId), export.output());
      assertTrue(Files.size(out) > 0, "empty export " + out);

      try (RemoteLookupClient client =
          RemoteLookupClient.connect(List.of(lookupPort), Duration.ofSeconds(60))) {
        Batch served = client.lookup(cacheId, INDICES);
        Map<String, String> inputs = client.inputs(cacheId);
        assertEquals("300", inputs.get("n"), "recorded inputs " + inputs);
        assertEquals(inputs, CacheExport.inputs(out), "the node's and the export's inputs");
        assertSameValues(served, out, inputs);
      }

      // the native libraries came from lib/, unpacked under the fresh HOME: nothing else had them
      assertTrue(
          Files.isDirectory(dist.userHome.resolve(".djl.ai/pytorch")),
          "no PyTorch library unpacked under " + dist.userHome);

      node.destroy(); // SIGTERM: the node leaves the cluster and exits 0
      assertEquals(0, Unpacked.finish(node, Duration.ofSeconds(90)), Unpacked.read(nodeLog));
      assertTrue(Unpacked.read(nodeLog).contains("node stopped:"), Unpacked.read(nodeLog));
    } finally {
      if (node != null && node.isAlive()) {
        node.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      }
    }
  }

  /** The served values of {@link #INDICES} are present in the export file and equal there. */
  private static void assertSameValues(Batch served, Path export, Map<String, String> inputs)
      throws Exception {
    CacheSpec spec = served.spec();
    assertEquals(300, spec.n());
    Fingerprint fingerprint = new Fingerprint(inputs.get("cache_name"), inputs.get("fingerprint"));
    List<Block> blocks = CacheExport.read(export, spec, fingerprint);
    Object[] exported = Batch.newValues(spec, INDICES.length);
    for (int p = 0; p < INDICES.length; p++) {
      long index = INDICES[p];
      assertTrue(
          blocks.get(spec.rangeOf(index)).gather(index, exported, p),
          "index " + index + " absent from the export");
    }
    assertArrayEquals(INDICES, served.indices());
    for (int f = 0; f < spec.fields().size(); f++) {
      assertTrue(
          Objects.deepEquals(exported[f], served.values()[f]),
          "field " + spec.fields().get(f).name() + " served unlike exported");
    }
  }

  /** {@code command} and its own options, then the job options every command here is given. */
  private List<String> jobArgs(String... command) {
    List<String> args = new ArrayList<>(List.of(command));
    args.addAll(
        List.of(
            "--data-dir",
            dir.resolve("data").toString(),
            "--examples",
            "300",
            "--range-size",
            "64"));
    return args;
  }

  private String[] job(String... command) {
    return jobArgs(command).toArray(String[]::new);
  }

  /** The node's {@code node up} line, once it is written. */
  private static Matcher awaitUp(Process node, Path log, Duration within) throws Exception {
    long deadline = System.nanoTime() + within.toNanos();
    while (System.nanoTime() < deadline) {
      Matcher m = UP.matcher(Unpacked.read(log));
      if (m.find()) {
        return m;
      }
      if (!node.isAlive()) {
        throw new AssertionError("node exited " + node.exitValue() + ":\n" + Unpacked.read(log));
      }
      Thread.sleep(200);
    }
    throw new AssertionError("node not up within " + within + ":\n" + Unpacked.read(log));
  }

  private static int freePort() throws Exception {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }
}
