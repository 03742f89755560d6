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
    Duration writeRetryMax,
    int snapshotEvery,
    Duration writeTimeout,
    long gossipBudget) {

  private static final String FRAME = "pekko.remote.artery.advanced.maximum-frame-size";

  /**
   * Reads {@code tensorcache.*} from {@code config}; a gossip budget that Artery's frames cannot
   * carry is an error naming both settings.
   */
  public static NodeSettings create(Config config) {
    Config c = config.getConfig("tensorcache");
    checkGossipBudget(c.getBytes("replication.gossip-budget"), config);
    return new NodeSettings(
        c.getDuration("lookup.timeout"),
        c.getDuration("lookup.retry-after"),
        c.getDuration("lookup.max-wait"),
        c.getInt("lookup.max-batch"),
        (int) c.getBytes("lookup.max-reply-bytes").longValue(),
        c.getDuration("coordinator.tick"),
        c.getDuration("coordinator.write-retry-max"),
        c.getInt("coordinator.snapshot-every"),
        c.getDuration("replication.write-timeout"),
        c.getBytes("replication.gossip-budget"));
  }

  /**
   * A block gossiped whole travels in one Artery frame with its presence and the message around it,
   * and a frame over the limit is dropped by the sender; so the budget must leave half the frame.
   */
  private static void checkGossipBudget(long budget, Config config) {
    if (!config.hasPath(FRAME)) {
      return; // no Artery: nothing is gossiped over the network
    }
    long frame = config.getBytes(FRAME);
    if (budget <= 0 || budget > frame / 2) {
      throw new IllegalArgumentException(
          String.format(
              "tensorcache.replication.gossip-budget is %d bytes, expected more than 0 and at most"
                  + " half of %s (%d bytes): a larger block could not be gossiped in one frame;"
                  + " lower the budget (ranges above it are replicated by reference) or raise"
                  + " the frame size",
              budget, FRAME, frame));
    }
  }
}
