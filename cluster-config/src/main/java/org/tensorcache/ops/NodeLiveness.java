package org.tensorcache.ops;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;

/**
 * The liveness check that Pekko Management runs for {@code /alive} ({@code
 * pekko.management.health-checks.liveness-checks.tensorcache}): the actor system runs. It stays
 * alive while the node shuts down, until it exits.
 */
public final class NodeLiveness implements Supplier<CompletionStage<Boolean>> {
  private final NodeHealth health;

  /** Made by Pekko Management with the node's actor system. */
  public NodeLiveness(ActorSystem system) {
    this.health = NodeHealth.get(Adapter.toTyped(system));
  }

  @Override
  public CompletionStage<Boolean> get() {
    return CompletableFuture.completedFuture(health.alive());
  }
}
