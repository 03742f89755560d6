package org.tensorcache.store.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.Fixtures;

class CacheSpecTest {
  private static final List<FieldSpec> ONE = List.of(FieldSpec.scalar("logp"));

  @Test
  void rangesCoverAllExamplesAndTheLastIsShorter() {
    CacheSpec spec = Fixtures.spec();
    assertEquals(4, spec.rangeCount());
    assertEquals(900, spec.rangeStart(3));
    assertEquals(300, spec.rangeLength(0));
    assertEquals(100, spec.rangeLength(3));
    assertEquals(0, spec.rangeOf(0));
    assertEquals(0, spec.rangeOf(299));
    assertEquals(1, spec.rangeOf(300));
    assertEquals(3, spec.rangeOf(999));
  }

  @Test
  void exactMultipleHasNoShortRange() {
    CacheSpec spec = new CacheSpec("c", 600, ONE, 300);
    assertEquals(2, spec.rangeCount());
    assertEquals(300, spec.rangeLength(1));
  }

  @Test
  void indexOutsideTheCacheIsNamed() {
    CacheSpec spec = new CacheSpec("dpo-ref", 1_000_000, ONE, 4096);
    var e = assertThrows(IndexOutOfBoundsException.class, () -> spec.rangeOf(1_200_000));
    assertEquals("index 1200000 out of range [0, 1000000) for cache 'dpo-ref'", e.getMessage());
    assertThrows(IndexOutOfBoundsException.class, () -> spec.rangeOf(-1));
    var r = assertThrows(IndexOutOfBoundsException.class, () -> spec.rangeStart(245));
    assertEquals("range 245 out of range [0, 245) for cache 'dpo-ref'", r.getMessage());
    assertThrows(IndexOutOfBoundsException.class, () -> spec.rangeLength(-1));
  }

  @Test
  void invalidComponentsAreNamed() {
    assertEquals(
        "range size 0 invalid, expected 1..2^24 for cache 'c'",
        assertThrows(IllegalArgumentException.class, () -> new CacheSpec("c", 10, ONE, 0))
            .getMessage());
    assertThrows(IllegalArgumentException.class, () -> new CacheSpec("c", 10, ONE, (1 << 24) + 1));
    assertEquals(
        "n 0 invalid, expected at least 1 example for cache 'c'",
        assertThrows(IllegalArgumentException.class, () -> new CacheSpec("c", 0, ONE, 8))
            .getMessage());
    assertThrows(IllegalArgumentException.class, () -> new CacheSpec("Bad Name", 10, ONE, 8));
    assertThrows(IllegalArgumentException.class, () -> new CacheSpec("c", 10, List.of(), 8));
    var dup =
        assertThrows(
            IllegalArgumentException.class,
            () -> new CacheSpec("c", 10, List.of(FieldSpec.scalar("a"), FieldSpec.scalar("a")), 8));
    assertEquals("field 'a' appears twice in cache 'c', expected unique names", dup.getMessage());
    assertThrows(
        IllegalArgumentException.class,
        () -> new CacheSpec("c", 10, List.of(FieldSpec.vector("v", 1 << 10)), 1 << 24));
    assertThrows(IllegalArgumentException.class, () -> new CacheSpec("c", Long.MAX_VALUE, ONE, 1));
  }

  @Test
  void fieldsAreFoundByName() {
    CacheSpec spec = Fixtures.spec();
    assertEquals(2, spec.fieldIndex("features"));
    assertEquals(FieldSpec.vector("features", 3), spec.field("features"));
    var e = assertThrows(IllegalArgumentException.class, () -> spec.field("x"));
    assertEquals(
        "unknown field 'x' in cache 'dpo-ref', expected one of "
            + "[chosen_logp, rejected_logp, features]",
        e.getMessage());
  }
}
