package org.tensorcache.model.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SyntheticPreferencesTest {
  @TempDir Path dir;

  @Test
  void sameSeedSameBytesOtherSeedOtherBytes() throws Exception {
    SyntheticPreferences.write(dir.resolve("a.jsonl"), 42, 500);
    SyntheticPreferences.write(dir.resolve("b.jsonl"), 42, 500);
    SyntheticPreferences.write(dir.resolve("c.jsonl"), 43, 500);
    byte[] a = Files.readAllBytes(dir.resolve("a.jsonl"));
    assertArrayEquals(a, Files.readAllBytes(dir.resolve("b.jsonl")));
    assertNotEquals(
        java.util.Arrays.hashCode(a),
        java.util.Arrays.hashCode(Files.readAllBytes(dir.resolve("c.jsonl"))));
  }

  @Test
  void chosenIsRightAndRejectedIsWrong() throws Exception {
    Path f = dir.resolve("d.jsonl");
    SyntheticPreferences.write(f, 7, 2000);
    ExampleSet data = ExampleSet.load(f);
    assertEquals(2000, data.size());
    for (PreferenceExample e : data.preferences()) {
      assertNotEquals(e.chosen(), e.rejected(), e.toString());
      String p = e.prompt();
      if (p.matches("\\d+[+-]\\d+=")) {
        String[] ab = p.substring(0, p.length() - 1).split("[+-]");
        int a = Integer.parseInt(ab[0]);
        int b = Integer.parseInt(ab[1]);
        assertEquals(p.contains("+") ? a + b : a - b, Integer.parseInt(e.chosen()), p);
      } else if (p.startsWith("reverse ")) {
        String word = p.substring(8, p.length() - 1);
        assertEquals(new StringBuilder(word).reverse().toString(), e.chosen());
      } else {
        assertEquals(p.substring(6, p.length() - 1).toUpperCase(), e.chosen());
      }
      assertFalse(e.rejected().isEmpty());
    }
  }
}
