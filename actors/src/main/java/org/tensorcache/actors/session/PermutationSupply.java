package org.tensorcache.actors.session;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.DispatcherSelector;

/**
 * Gives the sessions the epoch permutations their steps need without computing one on a session's
 * thread: a cached permutation at once, any other on the dispatcher {@value
 * TrainerSessionSettings#PERMUTATION_DISPATCHER}, for the session to pipe back to itself.
 */
final class PermutationSupply {
  private final Executor dispatcher;

  /** Creates the supply of the sessions of {@code system}. */
  PermutationSupply(ActorSystem<?> system) {
    this.dispatcher =
        system
            .dispatchers()
            .lookup(DispatcherSelector.fromConfig(TrainerSessionSettings.PERMUTATION_DISPATCHER));
  }

  /** Returns the permutation of {@code epoch} of the sampler's run if cached, else null. */
  int[] cached(Sampler sampler, long epoch) {
    return sampler.cachedOrder(epoch);
  }

  /**
   * Computes the permutation of {@code epoch} of the sampler's run on the permutation dispatcher;
   * one that another session asked for first is found cached there, not computed again.
   */
  CompletionStage<int[]> compute(Sampler sampler, long epoch) {
    return CompletableFuture.supplyAsync(() -> sampler.order(epoch), dispatcher);
  }

  /** Returns what made {@link #compute} fail, without the wrapper the future adds. */
  static Throwable cause(Throwable failure) {
    return failure instanceof CompletionException && failure.getCause() != null
        ? failure.getCause()
        : failure;
  }
}
