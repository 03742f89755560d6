package org.tensorcache.actors.client;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.sharding.typed.testkit.javadsl.TestEntityRef;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.cluster.typed.Join;
import org.apache.pekko.pattern.StatusReply;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.tensorcache.actors.TensorCache;
import org.tensorcache.actors.cache.TensorCacheNode;
import org.tensorcache.actors.session.RunConfig;
import org.tensorcache.actors.session.Sampler;
import org.tensorcache.actors.session.SessionStep;
import org.tensorcache.actors.session.TrainerSession;
import org.tensorcache.actors.session.TrainerSessionState;
import org.tensorcache.actors.testing.TestCache;
import org.tensorcache.actors.testing.TestCluster;

/**
 * A session request whose reply is lost (a timeout while the session's shard moves) is asked again;
 * a step served whose reply was lost is served again, never skipped: the trainer still sees steps
 * 0, 1, 2 with the sampler's indices and the cached values. A request never answered fails after
 * the last attempt with a {@link SessionFailedException} naming the session.
 */
class SessionClientRetryTest {
  private static final int N = 96;
  private static final String RUN = "run-retry";

  @TempDir Path dir;
  private ActorTestKit kit;

  @Test
  void aLostReplyIsAskedAgainWithoutSkippingAStep() throws Exception {
    TestCache cache = new TestCache(dir.resolve("cache"), N, 32);
    float[][] reference = cache.reference();
    kit =
        ActorTestKit.create(
            "SessionClientRetryTest",
            TestCluster.config(dir.resolve("node"), "\"compute\", \"lookup\", \"trainer\""));
    TensorCacheNode node = TensorCacheNode.get(kit.system());
    node.register(cache.definition());
    TensorCache.start(kit.system()).coordinator();
    Cluster cluster = Cluster.get(kit.system());
    cluster.manager().tell(Join.create(cluster.selfMember().address()));

    // between the client and the session: the replies of the first GetState and the first Next
    // are lost, as when the session's node dies after serving
    var real = TrainerSession.entityRef(kit.system(), RUN, 0);
    ActorRef<StatusReply<SessionStep>> lostStep = kit.spawn(Behaviors.ignore());
    ActorRef<TrainerSessionState> lostState = kit.spawn(Behaviors.ignore());
    AtomicInteger nexts = new AtomicInteger();
    AtomicInteger states = new AtomicInteger();
    AtomicBoolean loseEveryNext = new AtomicBoolean();
    ActorRef<TrainerSession.Command> lossy =
        kit.spawn(
            Behaviors.receiveMessage(
                m -> {
                  if (m instanceof TrainerSession.Next
                      && (nexts.getAndIncrement() == 0 || loseEveryNext.get())) {
                    real.tell(new TrainerSession.Next(lostStep));
                  } else if (m instanceof TrainerSession.GetState
                      && states.getAndIncrement() == 0) {
                    real.tell(new TrainerSession.GetState(lostState));
                  } else {
                    real.tell(m);
                  }
                  return Behaviors.same();
                }));
    SessionClient session =
        new SessionClient(
                TensorCacheClient.create(kit.system()),
                kit.system(),
                TestEntityRef.of(TrainerSession.ENTITY_KEY, TrainerSession.entityId(RUN, 0), lossy),
                cache.cacheId(),
                Duration.ofSeconds(3))
            .open(new RunConfig(N, 9L, 16, cache.cacheId()), 1, 0);

    Sampler sampler = Sampler.of(N, 9L, 16, 1);
    for (long step = 0; step < 3; step++) {
      TrainingBatch batch = session.next();
      assertEquals(step, batch.step());
      assertArrayEquals(sampler.indices(step, 0), batch.indices());
      float[] expected = new float[batch.indices().length];
      for (int i = 0; i < expected.length; i++) {
        expected[i] = reference[0][(int) batch.indices()[i]];
      }
      assertArrayEquals(expected, batch.values().floats("chosen_logp"));
    }
    assertTrue(states.get() >= 2, "the lost GetState was asked again");
    assertEquals(4, nexts.get(), "the lost Next was asked again, once");

    loseEveryNext.set(true);
    SessionFailedException failed = assertThrows(SessionFailedException.class, session::next);
    assertEquals(TrainerSession.entityId(RUN, 0), failed.sessionId());
    assertTrue(
        failed.getMessage().startsWith("trainer session " + RUN + "/0: Next failed: "),
        failed::getMessage);
    assertEquals(4 + SessionClient.ATTEMPTS, nexts.get(), "each attempt asked once");
  }

  @AfterEach
  void stop() {
    if (kit != null) {
      kit.shutdownTestKit();
    }
  }
}
