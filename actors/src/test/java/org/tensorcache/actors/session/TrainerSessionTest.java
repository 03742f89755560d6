package org.tensorcache.actors.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.tensorcache.actors.session.SessionTesting.next;
import static org.tensorcache.actors.session.SessionTesting.open;

import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit.CommandResultWithReply;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.tensorcache.actors.session.TrainerSession.Command;
import org.tensorcache.actors.session.TrainerSession.Next;
import org.tensorcache.actors.session.TrainerSession.Open;
import org.tensorcache.actors.session.TrainerSession.ResumeFrom;
import org.tensorcache.actors.session.TrainerSessionState.Event;
import org.tensorcache.actors.session.TrainerSessionState.Opened;
import org.tensorcache.actors.session.TrainerSessionState.Reopened;
import org.tensorcache.actors.session.TrainerSessionState.ResumedFrom;
import org.tensorcache.actors.session.TrainerSessionState.StepServed;

/** Serving, recovery and resumption of one trainer session, on an in-memory journal. */
class TrainerSessionTest {
  private static final ActorTestKit testKit = ActorTestKit.create(SessionTesting.eventSourced());
  private static final RunConfig RUN = SessionTesting.RUN;

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  @Test
  void restartedSessionResumesAtTheNextStepWithTheSameIndices() {
    var session = session("restart", 1);
    open(session, RUN, 2, 1, 0);
    Sampler sampler = Sampler.of(1000, 42, 64, 2);
    for (long step = 0; step < 17; step++) {
      SessionStep served = next(session);
      assertEquals(new SessionStep(step, step / 15, sampler.indices(step, 1)), served);
    }
    TrainerSessionState before = session.getState();
    // snapshots every 3 events: recovery reads a snapshot and replays the events after it
    assertEquals(before, session.restart().state());
    assertEquals(17, ((Opened) before).nextStep());
    assertEquals(new SessionStep(17, 1, sampler.indices(17, 1)), next(session));
  }

  @Test
  void resumeFromReplaysTheBatchesOfAnUninterruptedRun() {
    var uninterrupted = session("uninterrupted", 0);
    open(uninterrupted, RUN, 4, 0, 0);
    List<SessionStep> expected = new ArrayList<>();
    for (int i = 0; i < 30; i++) {
      expected.add(next(uninterrupted));
    }

    var preempted = session("preempted", 0);
    open(preempted, RUN, 4, 0, 0);
    for (int i = 0; i < 12; i++) {
      next(preempted);
    }
    // the trainer crashed after step 11; its last checkpoint was taken before step 5
    preempted.restart();
    CommandResultWithReply<Command, Event, TrainerSessionState, StatusReply<Opened>> resumed =
        preempted.runCommand(replyTo -> new ResumeFrom(5, replyTo));
    assertEquals(new ResumedFrom(5), resumed.event());
    assertEquals(5, resumed.reply().getValue().nextStep());
    assertEquals(5, ((Opened) preempted.restart().state()).nextStep());
    List<SessionStep> replayed = new ArrayList<>();
    for (int i = 5; i < 30; i++) {
      replayed.add(next(preempted));
    }
    assertEquals(expected.subList(5, 30), replayed);
  }

  @Test
  void reopenAtTheCheckpointStepResumesThere() {
    var session = session("reopen", 2);
    open(session, RUN, 4, 2, 0);
    List<SessionStep> first = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      first.add(next(session));
    }
    CommandResultWithReply<Command, Event, TrainerSessionState, StatusReply<Opened>> reopened =
        session.runCommand(replyTo -> new Open(RUN, 4, 2, 3, replyTo));
    assertEquals(new Reopened(3, 4), reopened.event());
    assertEquals(WorldSchedule.of(0, 4), reopened.reply().getValue().schedule());
    assertEquals(first.get(3), next(session));
    // opening again where it stands changes nothing
    assertTrue(
        session
            .<StatusReply<Opened>>runCommand(replyTo -> new Open(RUN, 4, 2, 4, replyTo))
            .hasNoEvents());
  }

  @Test
  void servedStepsAreRecordedAsEvents() {
    var session = session("events", 0);
    open(session, RUN, 1, 0, 5);
    CommandResultWithReply<Command, Event, TrainerSessionState, StatusReply<SessionStep>> served =
        session.runCommand(Next::new);
    assertEquals(new StepServed(5), served.event());
    assertEquals(64, served.reply().getValue().indices().length);
    assertEquals(new Opened(RUN, 0, WorldSchedule.of(5, 1), 6), served.state());
  }

  private static EventSourcedBehaviorTestKit<Command, Event, TrainerSessionState> session(
      String run, int rank) {
    return SessionTesting.session(testKit, SessionTesting.newRun(run), rank);
  }
}
