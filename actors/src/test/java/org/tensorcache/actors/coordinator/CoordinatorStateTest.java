package org.tensorcache.actors.coordinator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.tensorcache.actors.coordinator.CoordinatorState.FillRequested;
import org.tensorcache.actors.coordinator.CoordinatorState.RangeLost;
import org.tensorcache.actors.coordinator.CoordinatorState.RangePersisted;

class CoordinatorStateTest {
  @Test
  void eventsRecordFillsAndPersistedRangesPerCache() {
    CoordinatorState s =
        CoordinatorState.empty()
            .apply(new FillRequested("a"))
            .apply(new RangePersisted("a", 3))
            .apply(new RangePersisted("a", 70))
            .apply(new RangePersisted("b", 0))
            .apply(new RangePersisted("a", 3));
    assertTrue(s.progress("a").filling());
    assertFalse(s.progress("b").filling());
    assertTrue(s.progress("a").isPersisted(3));
    assertTrue(s.progress("a").isPersisted(70));
    assertFalse(s.progress("a").isPersisted(4));
    assertEquals(2, s.progress("a").persistedCount());
    assertEquals(1, s.progress("b").persistedCount());

    CoordinatorState lost = s.apply(new RangeLost("a", 70, "truncated"));
    assertFalse(lost.progress("a").isPersisted(70));
    assertTrue(lost.progress("a").isPersisted(3));
    assertTrue(s.progress("a").isPersisted(70), "states are immutable");
  }

  @Test
  void anUnknownCacheHasNothingPersisted() {
    CoordinatorState.CacheProgress p = CoordinatorState.empty().progress("x");
    assertFalse(p.filling());
    assertFalse(p.isPersisted(0));
    assertEquals(0, p.persistedCount());
  }
}
