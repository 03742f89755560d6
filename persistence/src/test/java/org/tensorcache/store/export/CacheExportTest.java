package org.tensorcache.store.export;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.store.Fixtures;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.segment.SegmentRejectedException;
import org.tensorcache.store.segment.SegmentRejectedException.Reason;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

class CacheExportTest {
  private static final CacheSpec SPEC = Fixtures.spec();
  private static final Fingerprint FP = Fixtures.fingerprint(SPEC);

  /** Prints what Python's safetensors sees: keys, metadata, shapes, dtypes and raw bits. */
  private static final String PYTHON =
      String.join(
          "\n",
          "import json, sys",
          "import numpy as np",
          "from safetensors import safe_open",
          "from safetensors.numpy import load_file",
          "path = sys.argv[1]",
          "tensors = load_file(path)",
          "with safe_open(path, framework='np') as f:",
          "    meta = f.metadata()",
          "    keys = sorted(f.keys())",
          "    features = f.get_tensor('features')",
          "bits = {}",
          "for k, v in tensors.items():",
          "    flat = v.reshape(-1)",
          "    bits[k] = (flat.view(np.uint32) if v.dtype == np.float32 else flat).tolist()",
          "out = {'keys': keys, 'meta': meta,",
          "       'shapes': {k: list(v.shape) for k, v in tensors.items()},",
          "       'dtypes': {k: str(v.dtype) for k, v in tensors.items()},",
          "       'bits': bits,",
          "       'masked_max': int(np.where(tensors['__present__'] == 1,",
          "           tensors['chosen_logp'], np.float32(-np.inf)).max().view(np.uint32)),",
          "       'features_row_901': features[901].view(np.uint32).tolist()}",
          "print(json.dumps(out))");

  @TempDir Path dir;

  /** Ranges 0 and 3 partial, range 1 complete, range 2 absent. */
  private static List<Block> someBlocks() {
    return List.of(
        Fixtures.block(SPEC, 0, 1, 50),
        Fixtures.block(SPEC, 1, 2, 100),
        Fixtures.block(SPEC, 3, 3, 30));
  }

  @Test
  void roundTripsEveryRange() throws IOException {
    Path file = dir.resolve("dpo-ref.safetensors");
    List<Block> blocks = someBlocks();
    CacheExport.write(file, SPEC, FP, blocks);
    List<Block> back = CacheExport.read(file, SPEC, FP);
    assertEquals(4, back.size());
    assertEquals(blocks.get(0), back.get(0));
    assertEquals(blocks.get(1), back.get(1));
    assertEquals(Block.empty(SPEC, 2), back.get(2));
    assertEquals(blocks.get(2), back.get(3));
    long header = Files.size(file) - 1000L * 5 * 4 - 1000;
    assertTrue(header > 8 && (header - 8) % 8 == 0, "header size " + header);
  }

  private static final Map<String, String> INPUTS =
      Map.of(
          "cache_id", FP.cacheId(),
          "fingerprint", FP.hex(),
          "rows_sha256", "ab".repeat(32),
          "dataset", "prefs \"v2\".jsonl",
          "truncation_mode", "keep_end");

  @Test
  void roundTripsTheInputsTheCacheWasFilledFrom() throws IOException {
    Path file = dir.resolve("dpo-ref.safetensors");
    List<Block> blocks = someBlocks();
    CacheExport.write(file, SPEC, FP, INPUTS, blocks);
    List<Block> back = CacheExport.read(file, SPEC, FP);
    assertEquals(blocks.get(1), back.get(1));
    assertEquals(blocks.get(2), back.get(3));
    assertEquals(INPUTS, CacheExport.inputs(file));
  }

  @Test
  void anExportWithoutInputsIsReadAsBefore() throws IOException {
    Path file = dir.resolve("dpo-ref.safetensors");
    List<Block> blocks = someBlocks();
    CacheExport.write(file, SPEC, FP, blocks);
    String header = new String(Files.readAllBytes(file), 0, 2000, StandardCharsets.ISO_8859_1);
    assertTrue(!header.contains("inputs"), "an export without inputs has no such key: " + header);
    assertEquals(blocks.get(0), CacheExport.read(file, SPEC, FP).get(0));
    assertEquals(Map.of(), CacheExport.inputs(file));
  }

  @Test
  void inputsOfAnotherCacheOrNotAnObjectOfStringsAreRejected() throws IOException {
    Path file = dir.resolve("dpo-ref.safetensors");
    Map<String, String> other = new TreeMap<>(INPUTS);
    other.put("fingerprint", "0".repeat(64));
    CacheExport.write(file, SPEC, FP, other, someBlocks());
    var e = assertThrows(SegmentRejectedException.class, () -> CacheExport.read(file, SPEC, FP));
    assertEquals(Reason.FOREIGN_FINGERPRINT, e.reason());
    assertTrue(e.getMessage().contains("0".repeat(64)), e.getMessage());

    CacheExport.write(file, SPEC, FP, Map.of("a", "b"), someBlocks());
    byte[] bytes = Files.readAllBytes(file);
    String text = new String(bytes, StandardCharsets.ISO_8859_1);
    String object = "{\\\"a\\\":\\\"b\\\"}";
    int at = text.indexOf(object);
    assertTrue(at > 0, "the inputs as written: " + text.substring(0, 400));
    byte[] list = "[\\\"a\\\",\\\"b\\\"]".getBytes(StandardCharsets.ISO_8859_1);
    System.arraycopy(list, 0, bytes, at, list.length);
    Files.write(file, bytes);
    e = assertThrows(SegmentRejectedException.class, () -> CacheExport.read(file, SPEC, FP));
    assertEquals(Reason.BAD_HEADER, e.reason());
    assertTrue(e.getMessage().contains("expected a JSON object"), e.getMessage());
  }

  @Test
  void anExportOfAnotherFingerprintIsRejected() throws IOException {
    Path file = dir.resolve("dpo-ref.safetensors");
    CacheExport.write(file, SPEC, FP, someBlocks());
    Fingerprint other = Fixtures.fingerprint(SPEC, "weights-sha256:other");
    var e = assertThrows(SegmentRejectedException.class, () -> CacheExport.read(file, SPEC, other));
    assertEquals(Reason.FOREIGN_FINGERPRINT, e.reason());
    assertTrue(e.getMessage().contains(FP.hex()) && e.getMessage().contains(other.hex()));
  }

  @Test
  void aCorruptExportIsRejected() throws IOException {
    Path file = dir.resolve("dpo-ref.safetensors");
    CacheExport.write(file, SPEC, FP, someBlocks());
    byte[] bytes = Files.readAllBytes(file);
    byte[] flipped = bytes.clone();
    flipped[bytes.length - 10] ^= 0x01;
    Files.write(file, flipped);
    assertEquals(
        Reason.BAD_CHECKSUM,
        assertThrows(SegmentRejectedException.class, () -> CacheExport.read(file, SPEC, FP))
            .reason());
    Files.write(file, java.util.Arrays.copyOf(bytes, bytes.length - 1));
    assertEquals(
        Reason.TRUNCATED,
        assertThrows(SegmentRejectedException.class, () -> CacheExport.read(file, SPEC, FP))
            .reason());
  }

  @Test
  void duplicateRangesAreRefused() {
    Path file = dir.resolve("x.safetensors");
    List<Block> twice = List.of(Block.empty(SPEC, 1), Block.empty(SPEC, 1));
    assertThrows(IllegalArgumentException.class, () -> CacheExport.write(file, SPEC, FP, twice));
    assertTrue(!Files.exists(file));
  }

  @Test
  void pythonSafetensorsReadsTheExport() throws Exception {
    requirePython();
    Path file = dir.resolve("dpo-ref.safetensors");
    List<Block> blocks = someBlocks();
    CacheExport.write(file, SPEC, FP, INPUTS, blocks);

    Process p = new ProcessBuilder("python3", "-c", PYTHON, file.toString()).start();
    byte[] stdout = p.getInputStream().readAllBytes();
    String stderr = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "python did not finish");
    assertEquals(0, p.exitValue(), stderr);
    JsonNode out = new ObjectMapper().readTree(stdout);

    assertEquals(
        "[\"__present__\",\"chosen_logp\",\"features\",\"rejected_logp\"]",
        out.get("keys").toString());
    assertEquals("[1000]", out.get("shapes").get("chosen_logp").toString());
    assertEquals("[1000,3]", out.get("shapes").get("features").toString());
    assertEquals("[1000]", out.get("shapes").get("__present__").toString());
    assertEquals("float32", out.get("dtypes").get("features").asText());
    assertEquals("uint8", out.get("dtypes").get("__present__").asText());
    JsonNode meta = out.get("meta");
    assertEquals("tensorcache-export/1", meta.get("format").asText());
    assertEquals(FP.hex(), meta.get("fingerprint").asText());
    assertEquals(FP.cacheId(), meta.get("cache_id").asText());
    assertEquals("1000", meta.get("n").asText());
    assertEquals("300", meta.get("range_size").asText());
    assertEquals(INPUTS, new ObjectMapper().readValue(meta.get("inputs").asText(), Map.class));
    assertEquals(
        "[{\"name\":\"chosen_logp\",\"dtype\":\"F32\",\"shape\":[]},"
            + "{\"name\":\"rejected_logp\",\"dtype\":\"F32\",\"shape\":[]},"
            + "{\"name\":\"features\",\"dtype\":\"F32\",\"shape\":[3]}]",
        meta.get("fields").asText());

    Block[] byRange = {blocks.get(0), blocks.get(1), Block.empty(SPEC, 2), blocks.get(2)};
    float[] one = new float[3];
    float maxChosen = Float.NEGATIVE_INFINITY;
    for (int f = 0; f < 3; f++) {
      String name = SPEC.fields().get(f).name();
      int width = SPEC.fields().get(f).width();
      List<Integer> expected = new ArrayList<>();
      List<Integer> presence = new ArrayList<>();
      for (long i = 0; i < SPEC.n(); i++) {
        Block b = byRange[SPEC.rangeOf(i)];
        boolean present = b.isPresent(i);
        presence.add(present ? 1 : 0);
        if (present) {
          b.copyValues(f, i, one, 0);
          if (f == 0) {
            maxChosen = Math.max(maxChosen, one[0]);
          }
        }
        for (int k = 0; k < width; k++) {
          expected.add(Float.floatToRawIntBits(present ? one[k] : Float.NEGATIVE_INFINITY));
        }
      }
      List<Integer> actual = new ArrayList<>();
      out.get("bits").get(name).forEach(n -> actual.add((int) n.asLong()));
      assertEquals(expected, actual, "field " + name);
      List<Integer> actualPresence = new ArrayList<>();
      out.get("bits").get("__present__").forEach(n -> actualPresence.add(n.asInt()));
      assertEquals(presence, actualPresence);
    }
    assertEquals(Float.floatToRawIntBits(maxChosen), (int) out.get("masked_max").asLong());
    float[] row901 = {Block.SENTINEL, Block.SENTINEL, Block.SENTINEL};
    if (byRange[3].isPresent(901)) {
      byRange[3].copyValues(2, 901, row901, 0);
    }
    for (int k = 0; k < 3; k++) {
      assertEquals(
          Float.floatToRawIntBits(row901[k]), (int) out.get("features_row_901").get(k).asLong());
    }
  }

  /** Skips without Python's safetensors and numpy, except in CI, where they must be installed. */
  /** Skips the test, or fails it under CI, without python3 and safetensors, numpy and more. */
  static void requirePython(String... more) throws InterruptedException {
    String modules =
        String.join(", ", List.of("safetensors", "numpy"))
            + (more.length == 0 ? "" : ", " + String.join(", ", more));
    String problem;
    try {
      Process p =
          new ProcessBuilder("python3", "-c", "import " + modules)
              .redirectErrorStream(true)
              .start();
      String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        problem = "python3 did not answer within 60 s";
      } else {
        problem = p.exitValue() == 0 ? null : output.strip();
      }
    } catch (IOException e) {
      problem = "python3 cannot be started: " + e.getMessage();
    }
    if (problem == null) {
      return;
    }
    String message =
        "python3 with the packages "
            + modules
            + " is needed (pip install "
            + modules.replace(",", "")
            + "): "
            + problem;
    if ("true".equals(System.getenv("CI"))) {
      fail(message);
    }
    Assumptions.assumeTrue(false, message);
  }
}
