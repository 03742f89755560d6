package org.tensorcache.store.journal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.typesafe.config.Config;
import java.util.Map;
import java.util.UUID;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.LogCapturingExtension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The PostgreSQL profile against a running server, named by {@code TENSORCACHE_PG_URL} (with {@code
 * TENSORCACHE_PG_USER} and {@code TENSORCACHE_PG_PASSWORD}); skipped without one.
 */
@ExtendWith(LogCapturingExtension.class)
@EnabledIfEnvironmentVariable(named = "TENSORCACHE_PG_URL", matches = ".+")
class JournalPostgresTest {
  /** The first write starts the connection pool: slow on a loaded machine, so be patient. */
  private static final java.time.Duration PATIENCE = java.time.Duration.ofSeconds(20);

  private static final long[] AMOUNTS = {2, 3, 5, 7};

  @Test
  void stateSurvivesARestartOfTheActorSystem() {
    Config config = JournalTestConfig.postgres(Map.of());
    // the server outlives the test: a fresh entity per run
    String id = "ledger-" + UUID.randomUUID();

    ActorTestKit first = ActorTestKit.create("JournalPostgresTest", config);
    try {
      JournalSchema.ensure(first.system());
      JournalSchema.ensure(first.system());
      TestProbe<Long> snapshots = first.createTestProbe();
      TestProbe<TestLedger.State> replies = first.createTestProbe();
      ActorRef<TestLedger.Command> ledger = first.spawn(TestLedger.create(id, snapshots.ref()));
      for (long amount : AMOUNTS) {
        ledger.tell(new TestLedger.Add(amount, replies.ref()));
        replies.receiveMessage(PATIENCE);
      }
      snapshots.expectMessage(PATIENCE, 3L);
    } finally {
      first.shutdownTestKit();
    }

    ActorTestKit second = ActorTestKit.create("JournalPostgresTest", config);
    try {
      TestProbe<TestLedger.State> replies = second.createTestProbe();
      ActorRef<TestLedger.Command> ledger =
          second.spawn(TestLedger.create(id, second.<Long>createTestProbe().ref()));
      ledger.tell(new TestLedger.Get(replies.ref()));
      TestLedger.State recovered = replies.receiveMessage(PATIENCE);
      assertEquals(17, recovered.total());
      assertArrayEquals(AMOUNTS, recovered.amounts());
    } finally {
      second.shutdownTestKit();
    }
  }
}
