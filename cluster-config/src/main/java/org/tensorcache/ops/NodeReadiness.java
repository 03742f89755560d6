package org.tensorcache.ops;

import java.util.concurrent.CompletionStage;
import java.util.function.Supplier;
import org.apache.pekko.actor.ActorSystem;
import org.apache.pekko.actor.typed.javadsl.Adapter;

/**
 * The readiness check that Pekko Management runs for {@code /ready} ({@code
 * pekko.management.health-checks.readiness-checks.tensorcache}): {@link NodeHealth#ready()}.
 */
public final class NodeReadiness implements Supplier<CompletionStage<Boolean>> {
  private final NodeHealth health;

  /** Made by Pekko Management with the node's actor system. */
  public NodeReadiness(ActorSystem system) {
    this.health = NodeHealth.get(Adapter.toTyped(system));
  }

  @Override
  public CompletionStage<Boolean> get() {
    return health.ready();
  }
}
