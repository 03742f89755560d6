package org.tensorcache.model.text;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

class ByteTokenizerTest {
  @Test
  void encodesUtf8BytesAndDecodesBack() {
    String text = "12+30= héllo ✓";
    int[] ids = ByteTokenizer.encode(text);
    assertEquals(text.getBytes(java.nio.charset.StandardCharsets.UTF_8).length, ids.length);
    assertEquals(text, ByteTokenizer.decode(ids));
  }

  @Test
  void pairMarksWhereTheResponseStarts() {
    ByteTokenizer.Pair pair = ByteTokenizer.encodePair("ab", "xyz");
    assertArrayEquals(
        new int[] {
          ByteTokenizer.BOS, 'a', 'b', ByteTokenizer.SEP, 'x', 'y', 'z', ByteTokenizer.EOS
        },
        pair.tokens());
    assertEquals(4, pair.responseStart());
    assertEquals("abxyz", ByteTokenizer.decode(pair.tokens()));
  }

  @Test
  void rejectsUnknownIds() {
    var e =
        assertThrows(IllegalArgumentException.class, () -> ByteTokenizer.decode(new int[] {260}));
    assertEquals("token id 260 out of range [0, 260)", e.getMessage());
  }
}
