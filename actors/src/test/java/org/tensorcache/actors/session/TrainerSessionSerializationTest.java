package org.tensorcache.actors.session;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.apache.pekko.serialization.Serializers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.tensorcache.actors.session.TrainerSession.GetState;
import org.tensorcache.actors.session.TrainerSession.Next;
import org.tensorcache.actors.session.TrainerSession.Open;
import org.tensorcache.actors.session.TrainerSession.ResumeFrom;
import org.tensorcache.actors.session.TrainerSessionState.Opened;
import org.tensorcache.actors.session.TrainerSessionState.Reopened;
import org.tensorcache.actors.session.TrainerSessionState.ResumedFrom;
import org.tensorcache.actors.session.TrainerSessionState.SessionOpened;
import org.tensorcache.actors.session.TrainerSessionState.StepServed;
import org.tensorcache.actors.session.TrainerSessionState.Unopened;
import org.tensorcache.actors.structure.WireTypes;
import org.tensorcache.store.serialization.KryoSerializer;

/** Every command, reply, event and state of a trainer session survives Kryo unchanged. */
class TrainerSessionSerializationTest {
  private static final ActorTestKit testKit = ActorTestKit.create(SessionTesting.eventSourced());

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  /** One of every command, reply, event and state of a session. */
  private static List<Object> samples() {
    TestProbe<StatusReply<Opened>> opened = testKit.createTestProbe();
    TestProbe<StatusReply<SessionStep>> steps = testKit.createTestProbe();
    TestProbe<TrainerSessionState> states = testKit.createTestProbe();
    WorldSchedule schedule = WorldSchedule.of(0, 4).from(6, 2).from(10, 8);
    Opened state = new Opened(SessionTesting.RUN, 2, schedule, 17);
    SessionStep served = new SessionStep(17, 1, new long[] {5, 999, 0, 1L << 40});
    return List.of(
        new Open(SessionTesting.RUN, 8, 2, 10, opened.ref()),
        new Next(steps.ref()),
        new ResumeFrom(4, opened.ref()),
        new GetState(states.ref()),
        SessionTesting.RUN,
        served,
        new SessionOpened(SessionTesting.RUN, 2, 0, 4),
        new Reopened(10, 8),
        new ResumedFrom(4),
        new StepServed(16),
        Unopened.INSTANCE,
        state,
        schedule);
  }

  @Test
  void everyMessageRoundTripsThroughKryoWithAnIdOfTheSessionRange() {
    List<Object> messages = samples();
    Serialization serialization = SerializationExtension.get(Adapter.toClassic(testKit.system()));
    for (Object message : messages) {
      assertEquals(message, testKit.serializationTestKit().verifySerialization(message, true));
      assertInstanceOf(KryoSerializer.class, serialization.findSerializerFor(message));
      int id =
          Integer.parseInt(
              Serializers.manifestFor(serialization.findSerializerFor(message), message));
      assertTrue(id >= 300 && id <= 399, () -> message.getClass() + " has Kryo id " + id);
    }
  }

  @Test
  void statusRepliesCarryingSessionValuesRoundTrip() {
    SessionStep served = new SessionStep(3, 0, new long[] {1, 2, 3});
    StatusReply<SessionStep> success = StatusReply.success(served);
    StatusReply<SessionStep> copy =
        testKit.serializationTestKit().verifySerialization(success, false);
    assertEquals(served, copy.getValue());
    StatusReply<SessionStep> error =
        StatusReply.error("world size 3 does not divide global batch 64");
    assertEquals(
        "world size 3 does not divide global batch 64",
        testKit.serializationTestKit().verifySerialization(error, false).getError().getMessage());
  }

  /** A new session message, or a Kryo registration of the package, without a sample fails here. */
  @Test
  void everySessionTypeThatCrossesNodesHasASampleHere() {
    WireTypes.assertCovered(
        samples(),
        type -> type.getPackageName().equals(TrainerSession.class.getPackageName()),
        testKit.system().settings().config(),
        getClass().getSimpleName());
  }

  @Test
  void arraysInsideRecordsAreCopiedNotShared() {
    long[] steps = {0, 6};
    WorldSchedule schedule = new WorldSchedule(steps, new int[] {4, 2});
    steps[1] = 7;
    schedule.fromSteps()[0] = 3;
    assertEquals(WorldSchedule.of(0, 4).from(6, 2), schedule);
  }
}
