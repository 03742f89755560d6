package org.tensorcache.actors.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.tensorcache.actors.session.SessionTesting.RUN;
import static org.tensorcache.actors.session.SessionTesting.assertRefused;
import static org.tensorcache.actors.session.SessionTesting.next;
import static org.tensorcache.actors.session.SessionTesting.open;
import static org.tensorcache.actors.session.SessionTesting.tryOpen;

import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.tensorcache.actors.session.TrainerSession.Command;
import org.tensorcache.actors.session.TrainerSession.GetState;
import org.tensorcache.actors.session.TrainerSession.Next;
import org.tensorcache.actors.session.TrainerSession.ResumeFrom;
import org.tensorcache.actors.session.TrainerSessionState.Event;
import org.tensorcache.actors.session.TrainerSessionState.Opened;
import org.tensorcache.actors.session.TrainerSessionState.Unopened;

/** Bad commands get a specific error and change nothing persisted. */
class TrainerSessionErrorsTest {
  private static final ActorTestKit testKit = ActorTestKit.create(SessionTesting.eventSourced());

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  @Test
  void unopenedSessionRefusesEverythingButAGoodOpen() {
    String id = TrainerSession.entityId(SessionTesting.newRun("unopened"), 1);
    var session = SessionTesting.session(testKit, id.substring(0, id.lastIndexOf('/')), 1);
    TrainerSessionState before = Unopened.INSTANCE;
    assertEquals(before, session.<TrainerSessionState>runCommand(GetState::new).reply());
    assertRefused(
        "trainer session " + id + " is not open; expected Open before Next",
        before,
        session,
        session.<StatusReply<SessionStep>>runCommand(Next::new));
    assertRefused(
        "trainer session " + id + " is not open; expected Open before ResumeFrom",
        before,
        session,
        session.<StatusReply<Opened>>runCommand(replyTo -> new ResumeFrom(0, replyTo)));
    assertRefused(
        "world size 3 does not divide global batch 64",
        before,
        session,
        tryOpen(session, RUN, 3, 1, 0));
    assertRefused(
        "rank 1 out of range [0, 1) of world size 1",
        before,
        session,
        tryOpen(session, RUN, 1, 1, 0));
    assertRefused(
        "rank 0 of Open does not match trainer session " + id + " of rank 1",
        before,
        session,
        tryOpen(session, RUN, 2, 0, 0));
    assertRefused(
        "global batch 2000 out of range [1, 1000] for 1000 examples",
        before,
        session,
        tryOpen(session, new RunConfig(1000, 42, 2000, "dpo-ref"), 2, 1, 0));
    assertRefused(
        "cache id ' ' of trainer session "
            + id
            + " is blank; expected the id of the tensor cache the run reads",
        before,
        session,
        tryOpen(session, new RunConfig(1000, 42, 64, " "), 2, 1, 0));
    assertRefused(
        "cannot open trainer session " + id + " at step -1; expected a step >= 0",
        before,
        session,
        tryOpen(session, RUN, 2, 1, -1));
    open(session, RUN, 2, 1, 0);
  }

  @Test
  void openSessionRefusesAnotherRunConfigurationAndStepsAhead() {
    String run = SessionTesting.newRun("open");
    String id = TrainerSession.entityId(run, 0);
    var session = SessionTesting.session(testKit, run, 0);
    open(session, RUN, 2, 0, 0);
    for (int i = 0; i < 4; i++) {
      next(session);
    }
    TrainerSessionState before = session.getState();
    assertRefused(
        "Open of trainer session "
            + id
            + " differs from its recorded configuration: seed 7 (recorded 42), cache id 'other'"
            + " (recorded 'dpo-ref'); a run keeps its configuration, a new one needs a new run id",
        before,
        session,
        tryOpen(session, new RunConfig(1000, 7, 64, "other"), 2, 0, 4));
    assertRefused(
        "Open of trainer session "
            + id
            + " differs from its recorded configuration: examples 999 (recorded 1000), global"
            + " batch 32 (recorded 64); a run keeps its configuration, a new one needs a new run"
            + " id",
        before,
        session,
        tryOpen(session, new RunConfig(999, 42, 32, "dpo-ref"), 2, 0, 4));
    assertRefused(
        "world size 5 does not divide global batch 64",
        before,
        session,
        tryOpen(session, RUN, 5, 0, 4));
    assertRefused(
        "cannot resume trainer session "
            + id
            + " from step 9: the last step served is 3; expected a step <= 4",
        before,
        session,
        session.<StatusReply<Opened>>runCommand(replyTo -> new ResumeFrom(9, replyTo)));
    assertRefused(
        "cannot resume trainer session "
            + id
            + " from step -2: it opened at step 0; expected a step >= 0",
        before,
        session,
        session.<StatusReply<Opened>>runCommand(replyTo -> new ResumeFrom(-2, replyTo)));
    // nothing was persisted by the refusals: the recovered state is the one before them
    assertEquals(before, session.restart().state());
  }

  @Test
  void sessionWithoutARankInItsIdRefusesToOpen() {
    String id = SessionTesting.newRun("no-rank");
    var session =
        EventSourcedBehaviorTestKit.<Command, Event, TrainerSessionState>create(
            testKit.system(),
            TrainerSession.create(id, TrainerSessionSettings.create(testKit.system())));
    assertRefused(
        "entity id '" + id + "' is not of the form <run id>/<rank>",
        Unopened.INSTANCE,
        session,
        tryOpen(session, RUN, 1, 0, 0));
  }
}
