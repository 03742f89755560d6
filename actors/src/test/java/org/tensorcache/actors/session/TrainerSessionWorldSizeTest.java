package org.tensorcache.actors.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.tensorcache.actors.session.SessionTesting.RUN;
import static org.tensorcache.actors.session.SessionTesting.assertRefused;
import static org.tensorcache.actors.session.SessionTesting.next;
import static org.tensorcache.actors.session.SessionTesting.open;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.tensorcache.actors.session.TrainerSession.Command;
import org.tensorcache.actors.session.TrainerSession.ResumeFrom;
import org.tensorcache.actors.session.TrainerSessionState.Event;
import org.tensorcache.actors.session.TrainerSessionState.Opened;

/** A run whose world shrinks and grows at step boundaries in the middle of an epoch. */
class TrainerSessionWorldSizeTest {
  private static final ActorTestKit testKit = ActorTestKit.create(SessionTesting.eventSourced());

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  @Test
  void everyServedPositionOfTheEpochAppearsOnceAcrossShrinkAndGrow() {
    String run = SessionTesting.newRun("elastic");
    List<EventSourcedBehaviorTestKit<Command, Event, TrainerSessionState>> ranks =
        new ArrayList<>();
    for (int rank = 0; rank < 8; rank++) {
      ranks.add(SessionTesting.session(testKit, run, rank));
    }
    List<Long> served = new ArrayList<>();
    // steps 0-5: a world of 4
    for (int rank = 0; rank < 4; rank++) {
      open(ranks.get(rank), RUN, 4, rank, 0);
    }
    serve(ranks, 4, 0, 6, served);
    // steps 6-9: ranks 2 and 3 were preempted, the others reopen with 2 at the boundary
    for (int rank = 0; rank < 2; rank++) {
      open(ranks.get(rank), RUN, 2, rank, 6);
    }
    serve(ranks, 2, 6, 10, served);
    // steps 10-14: the world grows to 8; ranks 2 and 3 rejoin, ranks 4-7 join fresh
    for (int rank = 0; rank < 8; rank++) {
      open(ranks.get(rank), RUN, 8, rank, 10);
    }
    serve(ranks, 8, 10, 15, served);

    int[] order = Permutations.of(RUN.examples(), RUN.seed(), 0);
    assertEquals(15 * 64, served.size());
    assertEquals(served.size(), new HashSet<>(served).size(), "an index was served twice");
    for (int position = 0; position < served.size(); position++) {
      assertEquals(order[position], served.get(position), "position " + position);
    }
    // the next epoch starts with all 8 ranks
    assertEquals(1, next(ranks.get(7)).epoch());
  }

  @Test
  void rankResumedBeforeTheChangesReplaysThemAndARejoinedOneCannot() {
    String run = SessionTesting.newRun("replay");
    var rank0 = SessionTesting.session(testKit, run, 0);
    var rank2 = SessionTesting.session(testKit, run, 2);
    open(rank0, RUN, 4, 0, 0);
    open(rank2, RUN, 4, 2, 0);
    List<SessionStep> first = new ArrayList<>();
    for (int step = 0; step < 6; step++) {
      first.add(next(rank0));
      next(rank2);
    }
    open(rank0, RUN, 2, 0, 6);
    for (int step = 6; step < 10; step++) {
      first.add(next(rank0));
    }
    open(rank0, RUN, 8, 0, 10);
    open(rank2, RUN, 8, 2, 10);
    for (int step = 10; step < 12; step++) {
      first.add(next(rank0));
    }
    assertEquals(
        WorldSchedule.of(0, 4).from(6, 2).from(10, 8), ((Opened) rank0.getState()).schedule());

    // rank 0 restarts from its checkpoint at step 4: the same batches, the same world sizes
    rank0.restart();
    StatusReply<Opened> resumed =
        rank0.<StatusReply<Opened>>runCommand(replyTo -> new ResumeFrom(4, replyTo)).reply();
    assertTrue(resumed.isSuccess(), resumed::toString);
    for (int step = 4; step < 12; step++) {
      assertEquals(first.get(step), next(rank0));
    }
    assertEquals(32, first.get(7).indices().length);
    assertEquals(8, first.get(11).indices().length);

    // rank 2 was not in the world during steps 6-9, so its history starts again at 10
    TrainerSessionState before = rank2.restart().state();
    assertEquals(WorldSchedule.of(10, 8), ((Opened) before).schedule());
    assertRefused(
        "cannot resume trainer session "
            + TrainerSession.entityId(run, 2)
            + " from step 7: it opened at step 10; expected a step >= 10",
        before,
        rank2,
        rank2.<StatusReply<Opened>>runCommand(replyTo -> new ResumeFrom(7, replyTo)));
  }

  /** Serves steps {@code [from, to)} on ranks {@code [0, worldSize)}, in order of step and rank. */
  private static void serve(
      List<EventSourcedBehaviorTestKit<Command, Event, TrainerSessionState>> ranks,
      int worldSize,
      long from,
      long to,
      List<Long> served) {
    for (long step = from; step < to; step++) {
      Set<Integer> ranksServed = new HashSet<>();
      for (int rank = 0; rank < worldSize; rank++) {
        SessionStep share = next(ranks.get(rank));
        assertEquals(step, share.step());
        assertEquals(64 / worldSize, share.indices().length);
        for (long index : share.indices()) {
          served.add(index);
        }
        ranksServed.add(rank);
      }
      assertEquals(worldSize, ranksServed.size());
    }
  }
}
