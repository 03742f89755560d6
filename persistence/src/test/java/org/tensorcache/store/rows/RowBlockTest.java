package org.tensorcache.store.rows;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.tensorcache.store.Fixtures;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.spec.CacheSpec;

class RowBlockTest {
  private static final CacheSpec SPEC = RowFixtures.plainSpec();

  private static RowBlock merged(RowBlock a, RowBlock b) {
    RowBlock m = a.copy();
    m.merge(b);
    return m;
  }

  @Test
  void mergeIsCommutativeAssociativeAndIdempotent() {
    for (long seed = 1; seed <= 20; seed++) {
      RowBlock a = RowFixtures.rows(SPEC, 1, seed, 50);
      RowBlock b = RowFixtures.rows(SPEC, 1, seed + 100, 50);
      RowBlock c = RowFixtures.rows(SPEC, 1, seed + 200, 50);
      assertEquals(merged(a, b), merged(b, a));
      assertEquals(merged(merged(a, b), c), merged(a, merged(b, c)));
      assertEquals(a, merged(a, a));
    }
  }

  @Test
  void aRowHeldByOneSideIsTakenAndTheCountsFollow() {
    RowBlock a = RowBlock.empty(SPEC, 0);
    RowBlock b = RowBlock.empty(SPEC, 0);
    a.put(3, 2, new byte[] {1, 2});
    b.put(5, 1, new byte[] {9});
    a.merge(b);
    assertEquals(2, a.presentCount());
    assertEquals(3, a.totalTokens());
    assertEquals(3, a.rowBytes());
    assertArrayEquals(new byte[] {9}, a.row(5));
    assertNull(a.row(4));
    assertFalse(a.isPresent(4));
    assertEquals(0, a.tokens(4));
  }

  @Test
  void whereBothHoldARowTheLargerIsKeptOnEveryReplica() {
    RowBlock a = RowBlock.empty(SPEC, 0);
    RowBlock b = RowBlock.empty(SPEC, 0);
    a.put(7, 1, new byte[] {(byte) 0x80});
    b.put(7, 1, new byte[] {0x7f, 0x7f});
    assertEquals(merged(a, b), merged(b, a));
    assertArrayEquals(new byte[] {(byte) 0x80}, merged(b, a).row(7)); // unsigned order
    b.put(7, 2, new byte[] {0});
    assertEquals(2, merged(a, b).tokens(7)); // more tokens first
    assertEquals(1, merged(a, b).presentCount());
    assertEquals(1, merged(a, b).rowBytes());
  }

  @Test
  void badPutsAndMergesAreRefusedNamingTheValue() {
    RowBlock rows = RowBlock.empty(SPEC, 1);
    var outside = assertThrows(IndexOutOfBoundsException.class, () -> rows.put(39, 1, new byte[1]));
    assertTrue(outside.getMessage().contains("index 39 is not in range 1 [40, 80)"));
    var none = assertThrows(IllegalArgumentException.class, () -> rows.put(40, 0, new byte[1]));
    assertTrue(none.getMessage().contains("example 40 of 0 tokens"), none.getMessage());
    var other =
        assertThrows(IllegalArgumentException.class, () -> rows.merge(RowBlock.empty(SPEC, 0)));
    assertTrue(other.getMessage().contains("range 0"), other.getMessage());
    assertEquals(0, rows.presentCount());
  }

  @Test
  void blocksAndRowsEachRefuseTheOtherKindOfCache() {
    var block = assertThrows(IllegalArgumentException.class, () -> Block.empty(SPEC, 0));
    assertTrue(block.getMessage().contains("cache 'hidden' is per-token"), block.getMessage());
    var rows =
        assertThrows(IllegalArgumentException.class, () -> RowBlock.empty(Fixtures.spec(), 0));
    assertTrue(rows.getMessage().contains("per-token fields only"), rows.getMessage());
  }
}
