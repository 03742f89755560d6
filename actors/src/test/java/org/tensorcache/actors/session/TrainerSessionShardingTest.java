package org.tensorcache.actors.session;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.tensorcache.actors.session.TrainerSession.Command;
import org.tensorcache.actors.session.TrainerSession.GetState;
import org.tensorcache.actors.session.TrainerSession.Next;
import org.tensorcache.actors.session.TrainerSession.Open;
import org.tensorcache.actors.session.TrainerSession.ResumeFrom;
import org.tensorcache.actors.session.TrainerSessionState.Opened;

/** Sessions reached through Cluster Sharding on a single-node cluster. */
class TrainerSessionShardingTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  private static final ActorTestKit testKit = ActorTestKit.create(SessionTesting.cluster());

  @BeforeAll
  static void joinItself() {
    Cluster cluster = Cluster.get(testKit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));
    TestProbe<Object> probe = testKit.createTestProbe();
    probe.awaitAssert(
        TIMEOUT,
        () -> {
          assertEquals(MemberStatus.up(), cluster.selfMember().status());
          return null;
        });
    TrainerSession.init(testKit.system());
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  @Test
  void entityServesAndResumesThroughSharding() throws Exception {
    String run = SessionTesting.newRun("sharded");
    EntityRef<Command> session = TrainerSession.entityRef(testKit.system(), run, 1);
    assertEquals(TrainerSession.entityId(run, 1), session.getEntityId());

    Opened opened =
        ask(
            session.askWithStatus(
                replyTo -> new Open(SessionTesting.RUN, 2, 1, 0, replyTo), TIMEOUT));
    assertEquals(0, opened.nextStep());
    Sampler sampler = Sampler.of(1000, 42, 64, 2);
    for (long step = 0; step < 5; step++) {
      SessionStep served = ask(session.<SessionStep>askWithStatus(Next::new, TIMEOUT));
      assertEquals(step, served.step());
      assertArrayEquals(sampler.indices(step, 1), served.indices());
    }
    ask(session.<Opened>askWithStatus(replyTo -> new ResumeFrom(2, replyTo), TIMEOUT));
    assertArrayEquals(
        sampler.indices(2, 1),
        ask(session.<SessionStep>askWithStatus(Next::new, TIMEOUT)).indices());
    TrainerSessionState state = ask(session.<TrainerSessionState>ask(GetState::new, TIMEOUT));
    assertEquals(new Opened(SessionTesting.RUN, 1, WorldSchedule.of(0, 2), 3), state);
  }

  private static <T> T ask(CompletionStage<T> reply) throws Exception {
    return reply.toCompletableFuture().get(TIMEOUT.toSeconds(), TimeUnit.SECONDS);
  }
}
