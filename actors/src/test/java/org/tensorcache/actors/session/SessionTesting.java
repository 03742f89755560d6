package org.tensorcache.actors.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.persistence.testkit.PersistenceTestKitPlugin;
import org.apache.pekko.persistence.testkit.PersistenceTestKitSnapshotPlugin;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit;
import org.apache.pekko.persistence.testkit.javadsl.EventSourcedBehaviorTestKit.CommandResultWithReply;
import org.tensorcache.actors.session.TrainerSession.Command;
import org.tensorcache.actors.session.TrainerSession.Next;
import org.tensorcache.actors.session.TrainerSession.Open;
import org.tensorcache.actors.session.TrainerSessionState.Event;
import org.tensorcache.actors.session.TrainerSessionState.Opened;

/** Configurations and common steps of the trainer session tests: in-memory journal, Kryo. */
final class SessionTesting {
  private SessionTesting() {}

  /** 1000 examples in batches of 64: 15 steps per epoch, 40 examples dropped from each. */
  static final RunConfig RUN = new RunConfig(1000, 42, 64, "dpo-ref");

  private static final AtomicInteger runs = new AtomicInteger();

  /** Returns the configuration of an {@link EventSourcedBehaviorTestKit} system. */
  static Config eventSourced() {
    return EventSourcedBehaviorTestKit.config()
        .withFallback(PersistenceTestKitSnapshotPlugin.getInstance().config())
        .withFallback(ConfigFactory.parseResources("session-test.conf"))
        .withFallback(ConfigFactory.defaultReference())
        .resolve();
  }

  /** Returns the configuration of a single-node cluster with in-memory persistence. */
  static Config cluster() {
    return ConfigFactory.parseString(
            """
            pekko.actor.provider = cluster
            pekko.remote.artery.canonical.hostname = 127.0.0.1
            pekko.remote.artery.canonical.port = 0
            pekko.cluster.jmx.multi-mbeans-in-same-jvm = on
            pekko.coordinated-shutdown.exit-jvm = off
            """)
        .withFallback(PersistenceTestKitPlugin.getInstance().config())
        .withFallback(PersistenceTestKitSnapshotPlugin.getInstance().config())
        .withFallback(ConfigFactory.parseResources("session-test.conf"))
        .withFallback(ConfigFactory.defaultReference())
        .resolve();
  }

  /** Returns a run id made of {@code name}, never returned before in this JVM. */
  static String newRun(String name) {
    return name + "-" + runs.incrementAndGet();
  }

  /**
   * Creates the session of {@code rank} of run {@code runId}, checking that its commands, events
   * and state survive serialization unchanged.
   */
  static EventSourcedBehaviorTestKit<Command, Event, TrainerSessionState> session(
      ActorTestKit testKit, String runId, int rank) {
    String entityId = TrainerSession.entityId(runId, rank);
    return EventSourcedBehaviorTestKit.create(
        testKit.system(),
        TrainerSession.create(entityId, TrainerSessionSettings.create(testKit.system())),
        EventSourcedBehaviorTestKit.enabledSerializationSettings().withVerifyEquality(true));
  }

  /** Sends {@link Open} and returns the reply, whether a success or an error. */
  static CommandResultWithReply<Command, Event, TrainerSessionState, StatusReply<Opened>> tryOpen(
      EventSourcedBehaviorTestKit<Command, Event, TrainerSessionState> session,
      RunConfig config,
      int worldSize,
      int rank,
      long step) {
    return session.runCommand(replyTo -> new Open(config, worldSize, rank, step, replyTo));
  }

  /** Opens the session and returns its state; fails the test on an error. */
  static Opened open(
      EventSourcedBehaviorTestKit<Command, Event, TrainerSessionState> session,
      RunConfig config,
      int worldSize,
      int rank,
      long step) {
    StatusReply<Opened> reply = tryOpen(session, config, worldSize, rank, step).reply();
    assertTrue(reply.isSuccess(), () -> "Open failed: " + reply);
    return reply.getValue();
  }

  /** Serves the next step; fails the test on an error. */
  static SessionStep next(
      EventSourcedBehaviorTestKit<Command, Event, TrainerSessionState> session) {
    StatusReply<SessionStep> reply =
        session.<StatusReply<SessionStep>>runCommand(Next::new).reply();
    assertTrue(reply.isSuccess(), () -> "Next failed: " + reply);
    return reply.getValue();
  }

  /**
   * Asserts that a command was refused with {@code message}, persisting nothing and leaving the
   * state as it was.
   */
  static void assertRefused(
      String message,
      TrainerSessionState before,
      EventSourcedBehaviorTestKit<Command, Event, TrainerSessionState> session,
      CommandResultWithReply<Command, Event, TrainerSessionState, ? extends StatusReply<?>>
          result) {
    assertTrue(result.reply().isError(), () -> "expected an error, got " + result.reply());
    assertEquals(message, result.reply().getError().getMessage());
    assertTrue(result.hasNoEvents(), () -> "persisted " + result.events());
    assertEquals(before, session.getState());
  }
}
