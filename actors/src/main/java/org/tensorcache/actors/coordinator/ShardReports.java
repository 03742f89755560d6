package org.tensorcache.actors.coordinator;

import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.tensorcache.actors.shard.ShardActor;

/**
 * Where a node's shards report the segments they wrote themselves: a node-local adapter from the
 * shard's report to the coordinator's protocol, so that the shard package needs no coordinator.
 */
public final class ShardReports {
  private ShardReports() {}

  /** Starts the adapter of this node; each report goes to {@code coordinator}, the proxy. */
  public static ActorRef<ShardActor.RangeWritten> start(
      ActorSystem<?> system, ActorRef<Coordinator.Command> coordinator) {
    return system.systemActorOf(
        Behaviors.receiveMessage(
            (ShardActor.RangeWritten w) -> {
              coordinator.tell(new Coordinator.FromShard(w));
              return Behaviors.same();
            }),
        "tensorcache-shard-reports",
        Props.empty());
  }
}
