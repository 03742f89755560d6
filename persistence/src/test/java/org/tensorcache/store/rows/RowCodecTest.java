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
  void exactTeacherRowsKeepEveryIdWithItsLogProbInAscendingIdOrder() {
    CacheSpec spec = RowFixtures.teacherSpec(true);
    RowCodec codec = RowCodec.of(spec);
    int tokens = 5;
    Object[] values = RowFixtures.values(spec, tokens, 11);
    Object[] back = codec.decode(codec.encode(tokens, values), tokens);
    assertArrayEquals((float[]) values[2], (float[]) back[2]);
    for (int t = 0; t < tokens; t++) {
      Map<Integer, Float> in = token(values, t);
      Map<Integer, Float> out = token(back, t);
      assertEquals(in, out);
      int[] ids = Arrays.copyOfRange((int[]) back[0], t * 8, t * 8 + 8);
      int[] sorted = ids.clone();
      Arrays.sort(sorted);
      assertArrayEquals(sorted, ids);
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
