package org.tensorcache.lease;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** Which member, if any, explains every unreachability record (observer to subject). */
class CutOffMemberTest {

  private static Map.Entry<String, String> r(String observer, String subject) {
    return Map.entry(observer, subject);
  }

  @Test
  void aMemberThatCannotReceiveIsTheOneEveryRecordRunsThrough() {
    // x hears no one; its gossip arrives and the others find it unreachable in turn
    List<Map.Entry<String, String>> records =
        List.of(
            r("x", "a"), r("x", "b"), r("x", "client"), r("a", "x"), r("b", "x"), r("client", "x"));
    assertEquals(Optional.of("x"), CutOffMember.of(records));
  }

  @Test
  void oneRecordOfEachDirectionIsEnough() {
    assertEquals(Optional.of("x"), CutOffMember.of(List.of(r("x", "a"), r("x", "b"), r("b", "x"))));
  }

  @Test
  void aCleanSplitOrACrashHasNoCycleAndIsLeftToTheResolver() {
    assertEquals(Optional.empty(), CutOffMember.of(List.of(r("a", "x"), r("b", "x"))));
    assertEquals(Optional.empty(), CutOffMember.of(List.of(r("x", "a"), r("x", "b"))));
    assertEquals(Optional.empty(), CutOffMember.of(List.<Map.Entry<String, String>>of()));
  }

  @Test
  void twoMembersThatEachExplainTheRecordsAreNotChosenBetween() {
    assertEquals(Optional.empty(), CutOffMember.of(List.of(r("a", "x"), r("x", "a"))));
  }

  @Test
  void recordsThatNoSingleMemberExplainsAreLeftToTheResolver() {
    // two faults at once: x cut off one way and b crashed
    List<Map.Entry<String, String>> records =
        List.of(r("x", "a"), r("a", "x"), r("a", "b"), r("x", "b"));
    assertEquals(Optional.empty(), CutOffMember.of(records));
  }
}
