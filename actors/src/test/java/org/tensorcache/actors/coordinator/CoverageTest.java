package org.tensorcache.actors.coordinator;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.tensorcache.actors.coordinator.CoordinatorState.RangeLost;
import org.tensorcache.actors.coordinator.CoordinatorState.RangePersisted;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.spec.CacheSpec;

class CoverageTest {
  @Test
  void aRangeWhoseSegmentIsBeingCheckedIsNotReportedPersisted() {
    CacheSpec spec = new CacheSpec("c", 40, List.of(FieldSpec.scalar("x")), 10);
    Coverage coverage = new Coverage();
    coverage.add("c-1", spec);
    CoordinatorState journal =
        CoordinatorState.empty()
            .apply(new RangePersisted("c-1", 0))
            .apply(new RangePersisted("c-1", 1))
            .apply(new RangePersisted("c-1", 2))
            .apply(new RangePersisted("c-1", 3));
    for (int r = 0; r < 4; r++) {
      coverage.verifying("c-1", r); // a cold start reads every segment back
    }
    assertEquals(0, coverage.persistedRanges("c-1", journal.progress("c-1")));

    coverage.verified("c-1", 0);
    coverage.verified("c-1", 1);
    coverage.verified("c-1", 3);
    assertEquals(3, coverage.persistedRanges("c-1", journal.progress("c-1")), "2 is still read");

    coverage.verified("c-1", 2); // found damaged: the journal records it lost
    CoordinatorState after = journal.apply(new RangeLost("c-1", 2, "truncated"));
    assertEquals(3, coverage.persistedRanges("c-1", after.progress("c-1")));
  }

  @Test
  void eachRangeHasOneStateAndTheLagIsTheOldestCompleteRangeNotPersisted() throws Exception {
    CacheSpec spec = new CacheSpec("c", 50, List.of(FieldSpec.scalar("x")), 10);
    AtomicLong nanos = new AtomicLong(1_000_000_000L);
    Coverage coverage = new Coverage(nanos::get);
    coverage.add("c-1", spec);
    CoordinatorState journal =
        CoordinatorState.empty()
            .apply(new RangePersisted("c-1", 0))
            .apply(new RangePersisted("c-1", 3));
    coverage.verifying("c-1", 3); // still read back: not persisted yet for anyone asking
    coverage.presence("c-1", 0, 10);
    coverage.presence("c-1", 1, 10); // complete, its segment not recorded
    coverage.presence("c-1", 2, 4);
    coverage.rejected("c-1", 4); // its segment failed its checks, nothing computed again yet
    CoordinatorState.CacheProgress p = journal.progress("c-1");
    assertArrayEquals(
        new byte[] {
          CacheStatus.PERSISTED,
          CacheStatus.COMPLETE,
          CacheStatus.COMPUTING,
          CacheStatus.MISSING,
          CacheStatus.REJECTED
        },
        coverage.rangeStates("c-1", p));

    nanos.addAndGet(30_000_000L);
    assertEquals(30, coverage.unpersistedMillis("c-1", p), "range 1 waits for its segment");
    CoordinatorState.CacheProgress written =
        journal.apply(new RangePersisted("c-1", 1)).progress("c-1");
    assertEquals(0, coverage.unpersistedMillis("c-1", written));

    coverage.presence("c-1", 4, 10); // computed again: complete, no longer shown rejected
    assertEquals(CacheStatus.COMPLETE, coverage.rangeStates("c-1", written)[4]);
  }
}
