package org.tensorcache.chaostests;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The journal's verdict on coordinator incarnations, from hand-made event rows. */
class JournalWritersTest {
  private static JournalWriters.Row row(String writer, long seq, long ms) {
    return new JournalWriters.Row(writer, seq, ms);
  }

  @Test
  void handoversOneAfterAnotherHold() {
    var v =
        JournalWriters.judge(
            List.of(row("a", 1, 100), row("a", 2, 110), row("b", 3, 150), row("c", 4, 150)));
    assertNull(v.violation());
    assertEquals(3, v.writers());
    assertEquals(0, v.minGapMs());
  }

  @Test
  void aWriterReturningAfterAnotherBeganWasActiveBesideIt() {
    var v = JournalWriters.judge(List.of(row("a", 1, 100), row("b", 2, 150), row("a", 3, 160)));
    assertNotNull(v.violation());
    assertTrue(v.violation().contains("writes again"), v.violation());
  }

  @Test
  void aNewWriterBeforeTheLastEventOfTheOldOverlapsIt() {
    var v = JournalWriters.judge(List.of(row("a", 1, 100), row("a", 2, 200), row("b", 3, 150)));
    assertNotNull(v.violation());
    assertTrue(v.violation().contains("before a wrote its last event"), v.violation());
  }

  @Test
  void aRepeatedSequenceNumberIsAViolation() {
    var v = JournalWriters.judge(List.of(row("a", 1, 100), row("b", 1, 150)));
    assertNotNull(v.violation());
    assertTrue(v.violation().contains("sequence number 1 after 1"), v.violation());
  }
}
