package org.tensorcache.actors.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.tensorcache.actors.session.SessionTesting.open;

import com.typesafe.config.ConfigFactory;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit.CommandResult;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.tensorcache.actors.session.TrainerSession.Command;
import org.tensorcache.actors.session.TrainerSession.GetState;
import org.tensorcache.actors.session.TrainerSession.Next;
import org.tensorcache.actors.session.TrainerSessionState.Event;
import org.tensorcache.actors.session.TrainerSessionState.Opened;
import org.tensorcache.actors.session.TrainerSessionState.StepServed;

/**
 * A session computes a permutation it does not find cached on the permutation dispatcher, not on
 * its own thread: while that dispatcher is held, the session still answers, has served nothing, and
 * keeps the commands that come meanwhile; once released, every reply comes as before, in order.
 */
class TrainerSessionPermutationTest {
  private static final ActorTestKit testKit =
      ActorTestKit.create(
          ConfigFactory.parseString(
                  TrainerSessionSettings.PERMUTATION_DISPATCHER
                      + ".thread-pool-executor.fixed-pool-size = 1")
              .withFallback(SessionTesting.eventSourced()));

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  @Test
  void sessionAnswersWhileItsPermutationWaitsForTheDispatcher() throws Exception {
    // an example count and seed of no other test: the permutation of epoch 0 is not cached
    RunConfig run = new RunConfig(997, 20_251_123L, 64, "dpo-ref");
    var session = SessionTesting.session(testKit, SessionTesting.newRun("permutation"), 0);
    open(session, run, 1, 0, 0);

    CountDownLatch held = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    Executor dispatcher =
        testKit
            .system()
            .dispatchers()
            .lookup(DispatcherSelector.fromConfig(TrainerSessionSettings.PERMUTATION_DISPATCHER));
    dispatcher.execute(
        () -> {
          held.countDown();
          try {
            release.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    assertTrue(held.await(10, TimeUnit.SECONDS), "the permutation dispatcher's thread is held");

    TestProbe<StatusReply<SessionStep>> first = testKit.createTestProbe();
    TestProbe<StatusReply<SessionStep>> second = testKit.createTestProbe();
    TestProbe<TrainerSessionState> state = testKit.createTestProbe();
    // the test kit reads the state right after each command: a session computing the permutation
    // on its own thread would have served step 0 by then
    CommandResult<Command, Event, TrainerSessionState> asked =
        session.runCommand(new Next(first.ref()));
    assertTrue(asked.hasNoEvents(), () -> "persisted " + asked.events());
    assertEquals(0, ((Opened) asked.state()).nextStep());
    assertTrue(session.runCommand(new Next(second.ref())).hasNoEvents());
    assertTrue(session.runCommand(new GetState(state.ref())).hasNoEvents());
    assertEquals(0, ((Opened) session.getState()).nextStep());

    release.countDown();
    Sampler sampler = Sampler.of(997, 20_251_123L, 64, 1);
    assertEquals(new SessionStep(0, 0, sampler.indices(0, 0)), first.receiveMessage().getValue());
    assertEquals(new SessionStep(1, 0, sampler.indices(1, 0)), second.receiveMessage().getValue());
    assertEquals(new Opened(run, 0, WorldSchedule.of(0, 1), 2), state.receiveMessage());
    // the steps were recorded as before: one event each, and a recovered session is where it was
    assertEquals(2, ((Opened) session.restart().state()).nextStep());
    CommandResult<Command, Event, TrainerSessionState> third =
        session.runCommand(new Next(first.ref()));
    assertEquals(new StepServed(2), third.event());
    assertEquals(new SessionStep(2, 0, sampler.indices(2, 0)), first.receiveMessage().getValue());
  }
}
