package org.tensorcache.store.export;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldArrays;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.Fixtures;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.segment.SegmentFile;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/** Every dtype through a segment, an export, and Python's safetensors reading the export. */
class TypedExportTest {
  static final CacheSpec SPEC =
      new CacheSpec(
          "typed",
          150,
          List.of(
              new FieldSpec("f", DType.F32, new int[0]),
              new FieldSpec("h", DType.F16, new int[] {3}),
              new FieldSpec("b", DType.BF16, new int[] {2}),
              new FieldSpec("i", DType.I32, new int[0]),
              new FieldSpec("l", DType.I64, new int[0])),
          64);
  static final Fingerprint FP = Fixtures.fingerprint(SPEC);

  /** Prints each tensor's raw element bits as integers, reading BF16 through torch. */
  private static final String PYTHON =
      String.join(
          "\n",
          "import json, sys, torch",
          "from safetensors.torch import load_file",
          "t = load_file(sys.argv[1])",
          "views = {torch.float32: torch.int32, torch.float16: torch.int16,",
          "         torch.bfloat16: torch.int16}",
          "out = {k: {'dtype': str(v.dtype), 'shape': list(v.shape),",
          "           'bits': v.view(views.get(v.dtype, v.dtype)).reshape(-1).tolist()}",
          "       for k, v in t.items()}",
          "print(json.dumps(out))");

  @TempDir Path dir;

  @Test
  void everyDtypeRoundTripsThroughSegmentsAndTheExport() throws Exception {
    List<Block> blocks = blocks();
    for (Block b : blocks) {
      Path file = dir.resolve("r" + b.range() + ".safetensors");
      SegmentFile.write(file, b, FP);
      assertEquals(b, SegmentFile.read(file, SPEC, FP, b.range()));
    }
    Path export = dir.resolve("typed.safetensors");
    CacheExport.write(export, SPEC, FP, blocks);
    assertEquals(blocks, CacheExport.read(export, SPEC, FP));
  }

  @Test
  void pythonSafetensorsReadsEveryDtypeBitForBit() throws Exception {
    CacheExportTest.requirePython("torch");
    List<Block> blocks = blocks();
    Path export = dir.resolve("typed.safetensors");
    CacheExport.write(export, SPEC, FP, blocks);
    Process p = new ProcessBuilder("python3", "-c", PYTHON, export.toString()).start();
    byte[] stdout = p.getInputStream().readAllBytes();
    String stderr = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(120, TimeUnit.SECONDS), "python did not finish");
    assertEquals(0, p.exitValue(), stderr);
    JsonNode out = new ObjectMapper().readTree(stdout);

    String[] torchTypes = {"torch.float32", "torch.float16", "torch.bfloat16", "torch.int32"};
    for (int f = 0; f < SPEC.fields().size(); f++) {
      FieldSpec field = SPEC.fields().get(f);
      JsonNode t = out.get(field.name());
      assertEquals(f < 4 ? torchTypes[f] : "torch.int64", t.get("dtype").asText(), field.name());
      List<Long> expected = new ArrayList<>();
      for (Block b : blocks) {
        Object raw = field.dtype().newArray(b.length() * field.width());
        b.copyRawValues(f, 0, raw, 0, FieldArrays.length(raw));
        for (int k = 0; k < FieldArrays.length(raw); k++) {
          expected.add(bits(raw, k));
        }
      }
      List<Long> actual = new ArrayList<>();
      t.get("bits").forEach(n -> actual.add(n.asLong()));
      assertEquals(expected, actual, "field " + field.name());
    }
  }

  /** Range 0 partial, range 1 complete, range 2 (22 examples) with one example. */
  static List<Block> blocks() {
    SplittableRandom random = new SplittableRandom(11);
    List<Block> blocks = new ArrayList<>();
    for (int r = 0; r < SPEC.rangeCount(); r++) {
      Block b = Block.empty(SPEC, r);
      for (long i = SPEC.rangeStart(r); i < SPEC.rangeStart(r) + SPEC.rangeLength(r); i++) {
        if (r == 1 || (r == 0 && random.nextBoolean()) || i == 140) {
          float x = (float) random.nextDouble(-100, 100);
          b.put(i, new float[][] {{x}, {x, -x, x / 7}, {x * 3, 1e-3f}, {(int) x}, {(long) x}});
        }
      }
      blocks.add(b);
    }
    return blocks;
  }

  private static long bits(Object raw, int k) {
    if (raw instanceof float[] f) {
      return Float.floatToRawIntBits(f[k]);
    }
    if (raw instanceof short[] s) {
      return s[k];
    }
    return raw instanceof int[] i ? i[k] : ((long[]) raw)[k];
  }
}
