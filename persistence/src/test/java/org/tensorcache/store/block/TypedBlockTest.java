package org.tensorcache.store.block;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldArrays;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.fields.HalfFloats;
import org.tensorcache.store.spec.CacheSpec;

/** Blocks of every dtype: storing a runner's floats, MAX, the checks, the gather. */
class TypedBlockTest {
  static final CacheSpec SPEC =
      new CacheSpec(
          "typed",
          200,
          List.of(
              new FieldSpec("h", DType.F16, new int[] {2}),
              new FieldSpec("b", DType.BF16, new int[0]),
              new FieldSpec("i", DType.I32, new int[0]),
              new FieldSpec("l", DType.I64, new int[0])),
          64);

  @Test
  void putStoresTheNearestHalfAndExactIntegers() {
    Block block = Block.empty(SPEC, 1);
    block.put(70, row(1.0f / 3, -2.5f, 1.00390625f, 300_000, -7));
    short[] h = new short[2];
    block.copyValues(0, 70, h, 0);
    assertEquals(HalfFloats.floatToF16(1.0f / 3), h[0]);
    assertEquals(-2.5f, HalfFloats.f16ToFloat(h[1]));
    short[] b = new short[1];
    block.copyValues(1, 70, b, 0);
    assertEquals(1.0f, HalfFloats.bf16ToFloat(b[0]), "1 + 2^-8 is a tie that rounds to even");
    int[] i = new int[1];
    block.copyValues(2, 70, i, 0);
    assertEquals(300_000, i[0]);
    long[] l = new long[1];
    block.copyValues(3, 70, l, 0);
    assertEquals(-7L, l[0]);
  }

  @Test
  void maxComparesHalvesAsTheFloatsTheyEncode() {
    Block a = Block.empty(SPEC, 0);
    Block c = Block.empty(SPEC, 0);
    // as unsigned patterns -1.0 (0xbc00) is above 0.5 (0x3800); as floats it is below
    a.put(3, row(-1.0f, 0.0f, -3.0f, -5, -9));
    c.put(3, row(0.5f, -0.0f, -2.0f, 4, -10));
    Block m = a.merge(c);
    assertEquals(m, c.merge(a), "merge is commutative");
    short[] h = new short[2];
    m.copyValues(0, 3, h, 0);
    assertEquals(0.5f, HalfFloats.f16ToFloat(h[0]));
    assertEquals(0, h[1], "+0 is above -0, as Math.max has it");
    short[] b = new short[1];
    m.copyValues(1, 3, b, 0);
    assertEquals(-2.0f, HalfFloats.bf16ToFloat(b[0]));
    int[] i = new int[1];
    m.copyValues(2, 3, i, 0);
    assertEquals(4, i[0]);
    long[] l = new long[1];
    m.copyValues(3, 3, l, 0);
    assertEquals(-9L, l[0]);
    // put on a present example takes the MAX too
    a.put(3, row(0.75f, 1.0f, 0.0f, 100, 5));
    a.copyValues(0, 3, h, 0);
    assertEquals(0.75f, HalfFloats.f16ToFloat(h[0]));
  }

  @Test
  void integerDtypesTakeIntegersOnlyAndNothingChanges() {
    Block block = Block.empty(SPEC, 0);
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> block.put(5, row(1, 1, 1, 2.5f, 0)));
    assertEquals(
        "index 5: field 'i' (I32) element 0 is 2.5, expected an integer within the range of I32",
        e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> block.put(5, row(1, 1, 1, 1e10f, 0)));
    assertThrows(IllegalArgumentException.class, () -> block.put(5, row(1, 1, Float.NaN, 0, 0)));
    assertFalse(block.isPresent(5));
    assertEquals(Block.empty(SPEC, 0), block);
  }

  @Test
  void adoptChecksTheJavaTypeTheSentinelsAndNaNPatterns() {
    int n = SPEC.rangeLength(0);
    Object[] values = {
      FieldArrays.sentinels(DType.F16, 2 * n),
      FieldArrays.sentinels(DType.BF16, n),
      FieldArrays.sentinels(DType.I32, n),
      FieldArrays.sentinels(DType.I64, n)
    };
    long[] presence = new long[1];
    Block.adopt(SPEC, 0, values, presence); // all missing: fine

    Object[] wrongType = values.clone();
    wrongType[2] = new long[n];
    assertEquals(
        "field 'i' of dtype I32 has values of long[] for range 0, expected int[]",
        assertThrows(IllegalArgumentException.class, () -> Block.of(SPEC, 0, wrongType, presence))
            .getMessage());

    Object[] notSentinel = values.clone();
    notSentinel[3] = new long[n];
    assertEquals(
        "index 0: field 'l' is missing but holds 0, expected the sentinel -9223372036854775808",
        assertThrows(IllegalArgumentException.class, () -> Block.of(SPEC, 0, notSentinel, presence))
            .getMessage());

    short[] nanHalf = (short[]) FieldArrays.sentinels(DType.F16, 2 * n);
    nanHalf[2] = (short) 0x7e00;
    Object[] withNaN = {nanHalf, new short[n], new int[n], new long[n]};
    long[] first = {0b10L};
    assertEquals(
        "index 1: field 'h' holds NaN",
        assertThrows(IllegalArgumentException.class, () -> Block.of(SPEC, 0, withNaN, first))
            .getMessage());
  }

  @Test
  void aLongBeyondFloatPrecisionIsKeptExactly() {
    int n = SPEC.rangeLength(0);
    long[] longs = (long[]) FieldArrays.sentinels(DType.I64, n);
    longs[9] = (1L << 53) + 1;
    Object[] values = {
      FieldArrays.sentinels(DType.F16, 2 * n),
      FieldArrays.sentinels(DType.BF16, n),
      FieldArrays.sentinels(DType.I32, n),
      longs
    };
    short[] h = (short[]) values[0];
    h[18] = HalfFloats.floatToF16(1.5f);
    h[19] = HalfFloats.floatToF16(-1.5f);
    ((short[]) values[1])[9] = HalfFloats.floatToBf16(3.0f);
    ((int[]) values[2])[9] = Integer.MIN_VALUE; // present: a real value, not the sentinel
    Block block = Block.of(SPEC, 0, values, new long[] {1L << 9});
    assertTrue(block.isPresent(9));
    Object[] out = {new short[2], new short[1], new int[1], new long[1]};
    assertTrue(block.gather(9, out, 0));
    assertEquals((1L << 53) + 1, ((long[]) out[3])[0]);
    assertEquals(Integer.MIN_VALUE, ((int[]) out[2])[0]);
    assertArrayEquals(
        new short[] {HalfFloats.floatToF16(1.5f), HalfFloats.floatToF16(-1.5f)}, (short[]) out[0]);
  }

  @Test
  void batchGatherCopiesEveryDtype() {
    Block r0 = Block.empty(SPEC, 0);
    Block r2 = Block.empty(SPEC, 2);
    r0.put(1, row(1, 2, 3, 4, 5));
    r2.put(130, row(-1, -2, -3, -4, -5));
    PublishedBlocks blocks = new PublishedBlocks(SPEC.rangeCount());
    blocks.setRelease(0, r0.copy());
    blocks.setRelease(2, r2.copy());
    Object[] out = {new short[6], new short[3], new int[3], new long[3]};
    int[] missing = BlockGather.gather(SPEC, blocks, "typed", new long[] {130, 2, 1}, out);
    assertArrayEquals(new int[] {1}, missing);
    assertArrayEquals(new int[] {-4, 0, 4}, (int[]) out[2]);
    assertArrayEquals(new long[] {-5, 0, 5}, (long[]) out[3]);
    assertEquals(-1f, HalfFloats.f16ToFloat(((short[]) out[0])[0]));
    assertEquals(3f, HalfFloats.bf16ToFloat(((short[]) out[1])[2]));
  }

  /** One example: h = [h0, h1], b, i, l as a runner would give them. */
  static float[][] row(float h0, float h1, float b, float i, float l) {
    return new float[][] {{h0, h1}, {b}, {i}, {l}};
  }
}
