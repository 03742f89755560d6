package org.tensorcache.actors.cache;

import com.typesafe.config.Config;
import java.time.Duration;

/** The {@code tensorcache} settings the actors use, read once. */
public record NodeSettings(
    Duration lookupTimeout,
    Duration lookupRetryAfter,
    Duration lookupMaxWait,
    int maxBatch,
    int maxReplyBytes,
    Duration coordinatorTick,
    int snapshotEvery,
    Duration writeTimeout,
    long gossipBudget) {

  /** Reads {@code tensorcache.*} from {@code config}. */
  public static NodeSettings create(Config config) {
    Config c = config.getConfig("tensorcache");
    return new NodeSettings(
        c.getDuration("lookup.timeout"),
        c.getDuration("lookup.retry-after"),
        c.getDuration("lookup.max-wait"),
        c.getInt("lookup.max-batch"),
        (int) c.getBytes("lookup.max-reply-bytes").longValue(),
        c.getDuration("coordinator.tick"),
        c.getInt("coordinator.snapshot-every"),
        c.getDuration("replication.write-timeout"),
        c.getBytes("replication.gossip-budget"));
  }
}
