package org.tensorcache.actors.shard;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.spec.CacheSpec;

/**
 * With groups of rows that are not consecutive (a user's model groups rows by length), a lookup's
 * missing index gets its own group computed first, whole, and the fill then takes the others.
 */
class MicroBatchPlanTest {
  private static final CacheSpec SPEC = new CacheSpec("c", 20, List.of(FieldSpec.scalar("x")), 10);

  @Test
  void aRequestedIndexGetsItsWholeGroupFirstThenTheFillTakesTheRest() {
    Block range1 = Block.empty(SPEC, 1); // indices [10, 20)
    List<int[]> groups = List.of(new int[] {0, 3, 7}, new int[] {1, 2, 9}, new int[] {4, 5, 6, 8});
    MicroBatchPlan plan = new MicroBatchPlan(groups, 10);
    assertEquals(1, plan.groupOf(19, range1.start()));
    assertEquals(-1, plan.next(range1, g -> false), "nothing asked, nothing to do");
    plan.request(new long[] {15}, range1);
    int first = plan.next(range1, g -> false);
    assertEquals(2, first);
    assertArrayEquals(new long[] {14, 15, 16, 18}, plan.indices(first, range1));
    plan.fill();
    Set<Integer> rest = new HashSet<>();
    int g;
    while ((g = plan.next(range1, busy -> busy == 2 || rest.contains(busy))) >= 0) {
      rest.add(g);
    }
    assertEquals(Set.of(0, 1), rest);
  }

  @Test
  void groupsMustCoverTheRangeOnce() {
    assertThrows(
        IllegalArgumentException.class,
        () -> new MicroBatchPlan(List.of(new int[] {0, 1}, new int[] {1, 2}), 3));
    assertThrows(
        IllegalArgumentException.class, () -> new MicroBatchPlan(List.of(new int[] {0, 2}), 3));
  }
}
