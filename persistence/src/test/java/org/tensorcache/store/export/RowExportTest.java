package org.tensorcache.store.export;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.store.Fixtures;
import org.tensorcache.store.rows.RowBlock;
import org.tensorcache.store.rows.RowCodec;
import org.tensorcache.store.rows.RowFixtures;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

class RowExportTest {
  @TempDir Path dir;

  @Test
  void anExportHoldsEveryPresentTokenDecodedWithTheExamplesOffsetsAndPresence() throws IOException {
    CacheSpec spec = RowFixtures.teacherSpec(false); // 50 examples, ranges of 16
    Fingerprint fp = Fixtures.fingerprint(spec);
    RowBlock r0 = RowFixtures.rows(spec, 0, 1, 60);
    RowBlock r3 = RowFixtures.rows(spec, 3, 2, 100); // the short last range; 1 and 2 missing
    Path file = dir.resolve("teacher.safetensors");
    RowExport.write(file, spec, fp, Map.of("runner", "topk"), List.of(r3, r0));

    byte[] bytes = Files.readAllBytes(file);
    ByteBuffer all = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    int headerLength = (int) all.getLong(0);
    JsonNode header =
        new ObjectMapper().readTree(new String(bytes, 8, headerLength, StandardCharsets.UTF_8));
    int data = 8 + headerLength;
    long tokens = r0.totalTokens() + r3.totalTokens();
    assertEquals("[" + tokens + ",8]", header.get("teacher_ids").get("shape").toString());
    assertEquals("[" + tokens + "]", header.get("teacher_tail_logp").get("shape").toString());
    assertEquals("[51]", header.get(RowExport.OFFSETS).get("shape").toString());
    JsonNode meta = header.get("__metadata__");
    assertTrue(meta.get("fields").asText().contains("\"per_token\":true"), meta.toString());
    CRC32C crc = new CRC32C();
    crc.update(bytes, data, bytes.length - data);
    assertEquals(String.format("%08x", crc.getValue()), meta.get("crc32c").asText());

    long offsets = data + header.get(RowExport.OFFSETS).get("data_offsets").get(0).asLong();
    long present = data + header.get(CacheExport.PRESENT).get("data_offsets").get(0).asLong();
    long ids = data + header.get("teacher_ids").get("data_offsets").get(0).asLong();
    RowCodec codec = RowCodec.of(spec);
    long token = 0;
    for (int i = 0; i < 50; i++) {
      RowBlock holder = i < 16 ? r0 : i >= 48 ? r3 : null;
      boolean held = holder != null && holder.isPresent(i);
      assertEquals(token, all.getLong((int) (offsets + 8L * i)), "offset of example " + i);
      assertEquals(held ? 1 : 0, bytes[(int) present + i], "presence of example " + i);
      if (held) {
        int n = holder.tokens(i);
        int[] expected = (int[]) codec.decode(holder.row(i), n)[0];
        int[] found = new int[n * 8];
        for (int k = 0; k < found.length; k++) {
          found[k] = all.getInt((int) (ids + 4 * (token * 8 + k)));
        }
        assertArrayEquals(expected, found, "ids of example " + i);
        token += n;
      }
    }
    assertEquals(tokens, all.getLong((int) (offsets + 8L * 50)));
  }

  private static final String PYTHON =
      String.join(
          "\n",
          "import json, sys",
          "sys.path.insert(0, sys.argv[2])",
          "from tensorcache import Ragged, load_export",
          "e = load_export(sys.argv[1])",
          "ids, tails = e.values['teacher_ids'], e.values['teacher_tail_logp']",
          "assert isinstance(ids, Ragged) and isinstance(tails, Ragged)",
          "print(json.dumps({'lengths': ids.lengths().tolist(),",
          "    'present': e.present.astype(int).tolist(),",
          "    'ids': {str(i): ids[i].tolist() for i in range(len(ids)) if e.present[i]},",
          "    'tails': {str(i): tails[i].view('<u4').tolist() for i in range(len(ids))",
          "              if e.present[i]}}))");

  @Test
  void theClientsLoadExportReadsEveryExampleAsARaggedValue() throws Exception {
    CacheExportTest.requirePython();
    CacheSpec spec = RowFixtures.teacherSpec(true);
    Fingerprint fp = Fixtures.fingerprint(spec);
    RowBlock r1 = RowFixtures.rows(spec, 1, 4, 70);
    Path file = dir.resolve("exact.safetensors");
    RowExport.write(file, spec, fp, Map.of(), List.of(r1));
    Path client = Path.of("..", "python").toAbsolutePath().normalize();
    Process p =
        new ProcessBuilder("python3", "-c", PYTHON, file.toString(), client.toString()).start();
    byte[] stdout = p.getInputStream().readAllBytes();
    String stderr = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "python did not finish");
    assertEquals(0, p.exitValue(), stderr);
    JsonNode out = new ObjectMapper().readTree(stdout);
    RowCodec codec = RowCodec.of(spec);
    for (int i = 0; i < 50; i++) {
      boolean held = i >= 16 && i < 32 && r1.isPresent(i);
      assertEquals(held ? 1 : 0, out.get("present").get(i).asInt(), "example " + i);
      assertEquals(held ? r1.tokens(i) : 0, out.get("lengths").get(i).asInt(), "example " + i);
      if (held) {
        Object[] values = codec.decode(r1.row(i), r1.tokens(i));
        int[] ids = (int[]) values[0];
        float[] tails = (float[]) values[2];
        JsonNode tokens = out.get("ids").get(Integer.toString(i));
        for (int t = 0; t < r1.tokens(i); t++) {
          for (int k = 0; k < 8; k++) {
            assertEquals(ids[t * 8 + k], tokens.get(t).get(k).asInt());
          }
          assertEquals(
              Integer.toUnsignedLong(Float.floatToRawIntBits(tails[t])),
              out.get("tails").get(Integer.toString(i)).get(t).asLong());
        }
      }
    }
  }

  @Test
  void eachExportRefusesTheOtherKindOfCache() {
    CacheSpec rows = RowFixtures.plainSpec();
    CacheSpec fixed = Fixtures.spec();
    var blocks =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                CacheExport.write(
                    dir.resolve("a"), rows, Fixtures.fingerprint(rows), Map.of(), List.of()));
    assertTrue(blocks.getMessage().contains("RowExport writes per-token caches"));
    assertThrows(
        IllegalArgumentException.class,
        () ->
            RowExport.write(
                dir.resolve("b"), fixed, Fixtures.fingerprint(fixed), Map.of(), List.of()));
  }
}
