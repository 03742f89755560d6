package org.tensorcache.store.rows;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;
import org.tensorcache.store.Fixtures;
import org.tensorcache.store.spec.CacheSpec;

class RowCodecTest {
  @Test
  void plainRowsRoundTripBitForBit() {
    CacheSpec spec = RowFixtures.plainSpec();
    RowCodec codec = RowCodec.of(spec);
    Object[] values = RowFixtures.values(spec, 7, 3);
    byte[] row = codec.encode(7, values);
    assertEquals(7 * (3 * 4 + 8), row.length);
    Object[] back = codec.decode(row, 7);
    assertArrayEquals((float[]) values[0], (float[]) back[0]);
    assertArrayEquals((long[]) values[1], (long[]) back[1]);
  }

  @Test
  void exactTeacherRowsComeBackAsComputedByLogProbThenId() {
    CacheSpec spec = RowFixtures.teacherSpec(true);
    RowCodec codec = RowCodec.of(spec);
    int tokens = 5;
    Object[] values = RowFixtures.values(spec, tokens, 11);
    int[] ids = (int[]) values[0];
    float[] logps = (float[]) values[1];
    ids[8] = 900; // token 1: a tie of its first two log-probs, and an exact 0 (+0, not -0)
    ids[9] = 3;
    logps[8] = 0f;
    logps[9] = 0f;
    byLogProbThenId(ids, logps, tokens);
    Object[] back = codec.decode(codec.encode(tokens, values), tokens);
    assertArrayEquals(ids, (int[]) back[0]);
    assertArrayEquals(logps, (float[]) back[1]); // bit for bit: +0 stays +0
    assertArrayEquals((float[]) values[2], (float[]) back[2]);
    assertEquals(3, ((int[]) back[0])[8]);
  }

  /** The order a teacher gives: log-prob descending, then id ascending. */
  private static void byLogProbThenId(int[] ids, float[] logps, int tokens) {
    for (int t = 0; t < tokens; t++) {
      Integer[] order = new Integer[8];
      for (int j = 0; j < 8; j++) {
        order[j] = t * 8 + j;
      }
      Arrays.sort(
          order,
          (a, b) ->
              logps[a] != logps[b]
                  ? Float.compare(logps[b], logps[a])
                  : Integer.compare(ids[a], ids[b]));
      int[] i2 = new int[8];
      float[] l2 = new float[8];
      for (int j = 0; j < 8; j++) {
        i2[j] = ids[order[j]];
        l2[j] = logps[order[j]];
      }
      System.arraycopy(i2, 0, ids, t * 8, 8);
      System.arraycopy(l2, 0, logps, t * 8, 8);
    }
  }

  @Test
  void compactTeacherRowsAreSmallerThanExactOnesAndClose() {
    CacheSpec compact = RowFixtures.teacherSpec(false);
    int tokens = 40;
    Object[] values = RowFixtures.values(compact, tokens, 5);
    byte[] small = RowCodec.of(compact).encode(tokens, values);
    byte[] exact = RowCodec.of(RowFixtures.teacherSpec(true)).encode(tokens, values);
    assertTrue(small.length < exact.length, small.length + " vs " + exact.length);
    Object[] back = RowCodec.of(compact).decode(small, tokens);
    for (int t = 0; t < tokens; t++) {
      Map<Integer, Float> in = token(values, t);
      token(back, t).forEach((id, logp) -> assertTrue(in.containsKey(id), "id " + id));
    }
  }

  @Test
  void valuesOfTheWrongShapeOrTypeAreRefusedNamingTheField() {
    CacheSpec spec = RowFixtures.plainSpec();
    RowCodec codec = RowCodec.of(spec);
    var shortStates =
        assertThrows(
            IllegalArgumentException.class,
            () -> codec.encode(2, new Object[] {new float[5], new long[2]}));
    assertTrue(shortStates.getMessage().contains("'states'"), shortStates.getMessage());
    assertTrue(shortStates.getMessage().contains("expected 6 elements"), shortStates.getMessage());
    var wrongType =
        assertThrows(
            IllegalArgumentException.class,
            () -> codec.encode(2, new Object[] {new float[6], new int[2]}));
    assertTrue(wrongType.getMessage().contains("'ids'"), wrongType.getMessage());
    float[] nan = new float[6];
    nan[4] = Float.NaN;
    var withNaN =
        assertThrows(
            IllegalArgumentException.class, () -> codec.encode(2, new Object[] {nan, new long[2]}));
    assertTrue(withNaN.getMessage().contains("NaN at token 1"), withNaN.getMessage());
    var none =
        assertThrows(
            IllegalArgumentException.class,
            () -> codec.encode(0, new Object[] {new float[0], new long[0]}));
    assertTrue(none.getMessage().contains("0 tokens"), none.getMessage());
  }

  @Test
  void aRowOfAnotherLengthIsRefusedOnDecode() {
    RowCodec codec = RowCodec.of(RowFixtures.plainSpec());
    byte[] row = codec.encode(3, RowFixtures.values(RowFixtures.plainSpec(), 3, 1));
    var e = assertThrows(IllegalArgumentException.class, () -> codec.decode(row, 4));
    assertTrue(e.getMessage().contains("60 bytes for 4 tokens, expected 80"), e.getMessage());
  }

  @Test
  void aCacheOfFixedShapeFieldsHasNoRowCodec() {
    var e = assertThrows(IllegalArgumentException.class, () -> RowCodec.of(Fixtures.spec()));
    assertTrue(e.getMessage().contains("per-token fields only"), e.getMessage());
  }

  private static Map<Integer, Float> token(Object[] values, int t) {
    int[] ids = (int[]) values[0];
    float[] logps = (float[]) values[1];
    Map<Integer, Float> m = new TreeMap<>();
    for (int j = t * 8; j < t * 8 + 8; j++) {
      m.put(ids[j], logps[j]);
    }
    return m;
  }
}
