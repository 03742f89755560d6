package org.tensorcache.store.block;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.Fixtures;
import org.tensorcache.store.spec.CacheSpec;

class BlockTest {
  private static final CacheSpec SPEC = Fixtures.spec();

  private static float[][] row(float chosen, float rejected, float... features) {
    return new float[][] {{chosen}, {rejected}, features};
  }

  @Test
  void putStoresAllFieldsAndPresenceSaysWhatExists() {
    Block b = Block.empty(SPEC, 1);
    assertEquals(300, b.start());
    b.put(301, row(Float.NEGATIVE_INFINITY, -2f, 1f, 2f, 3f));
    assertTrue(b.isPresent(301));
    assertFalse(b.isPresent(300));
    assertEquals(1, b.presentCount());
    float[] dst = new float[4];
    b.copyValues(0, 301, dst, 0);
    assertEquals(Float.NEGATIVE_INFINITY, dst[0]);
    b.copyValues(2, 301, dst, 1);
    assertArrayEquals(new float[] {Float.NEGATIVE_INFINITY, 1f, 2f, 3f}, dst);
  }

  @Test
  void aMissingValueIsNeverHandedOut() {
    Block b = Block.empty(SPEC, 0);
    var e = assertThrows(IllegalStateException.class, () -> b.copyValues(0, 5, new float[1], 0));
    assertEquals("index 5 is not present in range 0 of cache 'dpo-ref'", e.getMessage());
  }

  @Test
  void rejectedPutsNameTheProblemAndChangeNothing() {
    Block b = Block.empty(SPEC, 3);
    b.put(950, row(1f, 2f, 3f, 4f, 5f));
    Block before = b.copy();
    var outside =
        assertThrows(IndexOutOfBoundsException.class, () -> b.put(899, row(1, 1, 1, 1, 1)));
    assertEquals(
        "index 899 out of range [900, 1000) of range 3 of cache 'dpo-ref'", outside.getMessage());
    assertThrows(IndexOutOfBoundsException.class, () -> b.put(1000, row(1, 1, 1, 1, 1)));
    var width = assertThrows(IllegalArgumentException.class, () -> b.put(951, row(1, 1, 1, 1)));
    assertEquals(
        "index 951: field 'features' has 2 values, expected width 3 (shape [3])",
        width.getMessage());
    var nan =
        assertThrows(IllegalArgumentException.class, () -> b.put(950, row(9, 9, 9, Float.NaN, 9)));
    assertEquals(
        "index 950: field 'features' (F32) element 1 is NaN, expected a number", nan.getMessage());
    var count =
        assertThrows(IllegalArgumentException.class, () -> b.put(951, new float[][] {{1}, {1}}));
    assertEquals("index 951: 2 field arrays, expected 3 for cache 'dpo-ref'", count.getMessage());
    assertThrows(
        IllegalArgumentException.class, () -> b.put(951, new float[][] {{1}, null, {1, 1, 1}}));
    assertThrows(IllegalArgumentException.class, () -> b.put(951, null));
    assertEquals(before, b);
    assertEquals(1, b.presentCount());
  }

  @Test
  void putOnAPresentExampleTakesTheMax() {
    Block b = Block.empty(SPEC, 0);
    b.put(7, row(1f, -0.0f, 5f, Float.NEGATIVE_INFINITY, 0f));
    b.put(7, row(-1f, 0.0f, 4f, -3f, Float.POSITIVE_INFINITY));
    float[] f = new float[3];
    b.copyValues(2, 7, f, 0);
    assertArrayEquals(new float[] {5f, -3f, Float.POSITIVE_INFINITY}, f);
    float[] r = new float[1];
    b.copyValues(1, 7, r, 0);
    assertEquals(Float.floatToIntBits(0.0f), Float.floatToIntBits(r[0]));
    assertEquals(1, b.presentCount());
  }

  @Test
  void completeWhenEveryExampleIsPresent() {
    CacheSpec tiny = new CacheSpec("tiny", 3, List.of(FieldSpec.scalar("x")), 2);
    Block b = Block.empty(tiny, 1);
    assertEquals(1, b.length());
    assertFalse(b.isComplete());
    b.put(2, new float[][] {{Float.NEGATIVE_INFINITY}});
    assertTrue(b.isComplete());
    assertNotEquals(Block.empty(tiny, 1), b);
  }

  @Test
  void mergeTakesTheMaxAndTheOnlyHolder() {
    Block a = Block.empty(SPEC, 0);
    Block b = Block.empty(SPEC, 0);
    a.put(1, row(1f, 1f, 1f, 5f, 1f));
    b.put(1, row(2f, 0f, 3f, 2f, 1f));
    a.put(2, row(-1f, -1f, -1f, -1f, -1f));
    b.put(3, row(Float.NEGATIVE_INFINITY, 0f, 0f, 0f, 0f));
    Block m = a.merge(b);
    float[] f = new float[3];
    m.copyValues(2, 1, f, 0);
    assertArrayEquals(new float[] {3f, 5f, 1f}, f);
    m.copyValues(2, 2, f, 0);
    assertArrayEquals(new float[] {-1f, -1f, -1f}, f);
    assertTrue(m.isPresent(3));
    assertEquals(3, m.presentCount());
    assertEquals(2, a.presentCount(), "merge leaves its inputs alone");
  }

  @Test
  void blocksOfDifferentRangesOrSpecsDoNotMerge() {
    assertThrows(
        IllegalArgumentException.class, () -> Block.empty(SPEC, 0).merge(Block.empty(SPEC, 1)));
    CacheSpec other = new CacheSpec("dpo-ref", 1000, List.of(FieldSpec.scalar("x")), 300);
    assertThrows(
        IllegalArgumentException.class, () -> Block.empty(SPEC, 0).merge(Block.empty(other, 0)));
  }

  @Test
  void equalityIsBitwise() {
    Block a = Block.empty(SPEC, 0);
    Block b = Block.empty(SPEC, 0);
    a.put(0, row(0.0f, 0f, 0f, 0f, 0f));
    b.put(0, row(-0.0f, 0f, 0f, 0f, 0f));
    assertNotEquals(a, b);
    assertEquals(a, a.copy());
    assertEquals(a.hashCode(), a.copy().hashCode());
  }

  @Test
  void ofRejectsValuesThatCannotHaveBeenStored() {
    Block b = Fixtures.block(SPEC, 3, 1, 50);
    float[][] values = new float[3][];
    for (int f = 0; f < 3; f++) {
      values[f] = new float[100 * SPEC.fields().get(f).width()];
      b.copyRawValues(f, 0, values[f], 0, values[f].length);
    }
    long[] presence = b.presenceWords();
    assertEquals(b, Block.of(SPEC, 3, values, presence));
    int missing = 0;
    while (b.isPresent(900 + missing)) {
      missing++;
    }
    values[0][missing] = 1f;
    assertThrows(IllegalArgumentException.class, () -> Block.of(SPEC, 3, values, presence));
    values[0][missing] = Block.SENTINEL;
    presence[1] |= 1L << 40;
    assertThrows(IllegalArgumentException.class, () -> Block.of(SPEC, 3, values, presence));
  }
}
