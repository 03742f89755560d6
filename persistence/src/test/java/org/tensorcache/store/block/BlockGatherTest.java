package org.tensorcache.store.block;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.spec.CacheSpec;

class BlockGatherTest {
  private static final CacheSpec SPEC =
      new CacheSpec("g", 20, List.of(FieldSpec.scalar("s"), FieldSpec.vector("v", 3)), 8);

  @Test
  void copiesEveryFieldOfAPresentExampleAndNothingOfAMissingOne() {
    Block block = Block.empty(SPEC, 1); // indices [8, 16)
    block.put(9, new float[][] {{Float.NEGATIVE_INFINITY}, {1, 2, 3}});
    float[][] out = {new float[2], new float[6]};

    assertTrue(block.gather(9, out, 1));
    assertArrayEquals(new float[] {0, Float.NEGATIVE_INFINITY}, out[0]);
    assertArrayEquals(new float[] {0, 0, 0, 1, 2, 3}, out[1]);

    assertFalse(block.gather(10, out, 0), "a missing example is reported, not served");
    assertArrayEquals(new float[] {0, Float.NEGATIVE_INFINITY}, out[0]);
    assertArrayEquals(new float[] {0, 0, 0, 1, 2, 3}, out[1]);
  }

  @Test
  void scalarFieldsOnlyTakeTheSameCare() {
    CacheSpec scalars =
        new CacheSpec("s", 20, List.of(FieldSpec.scalar("a"), FieldSpec.scalar("b")), 8);
    Block block = Block.empty(scalars, 2); // indices [16, 20)
    block.put(19, new float[][] {{-0.0f}, {7}});
    float[][] out = {new float[3], new float[3]};
    assertFalse(block.gather(18, out, 0));
    assertTrue(block.gather(19, out, 2));
    assertArrayEquals(new float[] {0, 0, -0.0f}, out[0]);
    assertArrayEquals(new float[] {0, 0, 7}, out[1]);
    assertThrows(IndexOutOfBoundsException.class, () -> block.gather(20, out, 0));
  }

  @Test
  void anIndexOfAnotherRangeIsAnError() {
    Block block = Block.empty(SPEC, 1);
    float[][] out = {new float[1], new float[3]};
    assertThrows(IndexOutOfBoundsException.class, () -> block.gather(16, out, 0));
    assertThrows(IndexOutOfBoundsException.class, () -> block.gather(7, out, 0));
  }
}
