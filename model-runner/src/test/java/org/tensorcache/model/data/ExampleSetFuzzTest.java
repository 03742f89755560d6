package org.tensorcache.model.data;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import org.junit.jupiter.api.io.TempDir;

/**
 * Arbitrary bytes as a JSONL data set: {@link ExampleSet#load} gives an example set, a {@link
 * MalformedDataException} naming the line or an {@link EmptyDataSetException} naming the file,
 * never another exception. A set that loads has the SHA-256 of the file's bytes, and its rows
 * written back as JSONL load as the same rows.
 */
class ExampleSetFuzzTest {
  private static final DataFormat[] FORMATS = {
    null, DataFormat.TEXT, DataFormat.TOKENS, DataFormat.DOCUMENT, DataFormat.CONVERSATIONAL
  };

  /** Escapes all but ASCII, so that any string (a lone surrogate too) survives the round trip. */
  private static final JsonMapper JSON =
      JsonMapper.builder().enable(JsonWriteFeature.ESCAPE_NON_ASCII).build();

  @TempDir static Path dir;

  /** The last byte picks the format (detected, or one forced); the others are the file. */
  @FuzzTest(maxDuration = "3m")
  void loadJsonl(FuzzedDataProvider data) throws IOException {
    DataFormat format = FORMATS[data.consumeInt(0, FORMATS.length - 1)];
    byte[] bytes = data.consumeRemainingAsBytes();
    Path file = dir.resolve("rows.jsonl");
    Files.write(file, bytes);
    ExampleSet set;
    try {
      set = ExampleSet.load(file, format);
    } catch (MalformedDataException e) {
      assertTrue(e.line() >= 1, e.getMessage());
      assertTrue(e.getMessage().startsWith(file + " line " + e.line() + ": "), e.getMessage());
      return;
    } catch (EmptyDataSetException e) {
      assertTrue(e.getMessage().startsWith("data set " + file + " "), e.getMessage());
      return;
    }
    assertTrue(set.size() > 0);
    if (!isGzip(bytes)) {
      assertEquals(sha256(bytes), set.digest());
    }
    for (int i = 0; i < set.size(); i++) {
      assertEquals(i, set.get(i).index());
    }

    Path again = dir.resolve("again.jsonl");
    Files.write(again, jsonl(set));
    ExampleSet reread = ExampleSet.load(again);
    assertEquals(set.examples(), reread.examples());
    assertEquals(set.format(), reread.format());
  }

  /** The rows of {@code set} as JSONL in the shape of its format. */
  private static byte[] jsonl(ExampleSet set) throws IOException {
    StringBuilder out = new StringBuilder();
    for (Example e : set.examples()) {
      ObjectNode row = JSON.createObjectNode();
      if (e instanceof PreferenceExample p) {
        row.put("prompt", p.prompt()).put("chosen", p.chosen()).put("rejected", p.rejected());
      } else if (e instanceof TokenizedPreference t) {
        ids(row, "prompt_ids", t.promptIds());
        ids(row, "chosen_ids", t.chosenIds());
        ids(row, "rejected_ids", t.rejectedIds());
      } else if (e instanceof DocumentExample d) {
        row.put("text", d.text());
      } else {
        throw new AssertionError("a data set reader gave " + e);
      }
      out.append(JSON.writeValueAsString(row)).append('\n');
    }
    return out.toString().getBytes(StandardCharsets.US_ASCII);
  }

  private static void ids(ObjectNode row, String field, int[] ids) {
    var array = row.putArray(field);
    for (int id : ids) {
      array.add(id);
    }
  }

  private static boolean isGzip(byte[] bytes) {
    return bytes.length >= 2 && (bytes[0] & 0xff) == 0x1f && (bytes[1] & 0xff) == 0x8b;
  }

  private static String sha256(byte[] bytes) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
