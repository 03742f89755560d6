package org.tensorcache.model.hf;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * TRL's collator: prompt + completion sliced [:max] or [-max:], the first position never counts.
 */
class TruncationTest {
  private static final int[] PROMPT = {10, 11, 12, 13};
  private static final int[] COMPLETION = {20, 21, 22};

  @Test
  void noCutCountsEveryCompletionToken() {
    Truncation.Sequence s = new Truncation(0, Truncation.Mode.KEEP_START).cut(PROMPT, COMPLETION);
    assertArrayEquals(new int[] {10, 11, 12, 13, 20, 21, 22}, s.ids());
    assertEquals(4, s.completionStart());
    assertEquals(3, s.countedTokens());
  }

  @Test
  void keepStartKeepsTheFirstTokens() {
    Truncation t = new Truncation(5, Truncation.Mode.KEEP_START);
    Truncation.Sequence s = t.cut(PROMPT, COMPLETION);
    assertArrayEquals(new int[] {10, 11, 12, 13, 20}, s.ids());
    assertEquals(1, s.countedTokens());
    assertFalse(t.dropsPrompt(PROMPT.length));
    Truncation tight = new Truncation(4, Truncation.Mode.KEEP_START);
    assertEquals(0, tight.cut(PROMPT, COMPLETION).countedTokens());
    assertTrue(tight.dropsPrompt(PROMPT.length), "TRL drops a row whose prompt fills max_length");
  }

  @Test
  void keepEndKeepsTheLastTokensAndItsFirstPositionIsNoTarget() {
    Truncation t = new Truncation(5, Truncation.Mode.KEEP_END);
    Truncation.Sequence s = t.cut(PROMPT, COMPLETION);
    assertArrayEquals(new int[] {12, 13, 20, 21, 22}, s.ids());
    assertEquals(2, s.completionStart());
    assertEquals(3, s.countedTokens());
    Truncation.Sequence inside =
        new Truncation(2, Truncation.Mode.KEEP_END).cut(PROMPT, COMPLETION);
    assertArrayEquals(new int[] {21, 22}, inside.ids());
    assertEquals(1, inside.countedTokens(), "position 0 has no token before it");
    assertFalse(new Truncation(2, Truncation.Mode.KEEP_END).dropsPrompt(PROMPT.length));
  }

  @Test
  void emptyPromptNeverCountsTheFirstToken() {
    Truncation.Sequence s =
        new Truncation(0, Truncation.Mode.KEEP_START).cut(new int[0], COMPLETION);
    assertEquals(2, s.countedTokens());
  }

  @Test
  void badSettingsAreNamed() {
    var e = assertThrows(IllegalArgumentException.class, () -> Truncation.Mode.parse("left"));
    assertEquals("truncation mode 'left' unknown, expected keep_start or keep_end", e.getMessage());
    var n =
        assertThrows(
            IllegalArgumentException.class, () -> new Truncation(-3, Truncation.Mode.KEEP_END));
    assertEquals("max length -3 invalid, expected 0 (no truncation) or >= 2", n.getMessage());
  }
}
