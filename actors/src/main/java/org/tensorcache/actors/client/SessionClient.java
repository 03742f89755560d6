package org.tensorcache.actors.client;

import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.IntFunction;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;
import org.apache.pekko.pattern.AskTimeoutException;
import org.apache.pekko.pattern.StatusReply;
import org.tensorcache.actors.cache.NodeMetrics;
import org.tensorcache.actors.lookup.LookupFailedException;
import org.tensorcache.actors.session.RunConfig;
import org.tensorcache.actors.session.SessionStep;
import org.tensorcache.actors.session.TrainerSession;
import org.tensorcache.actors.session.TrainerSessionState;

/**
 * A trainer rank's durable position in its run: each {@link #next()} is the next step's indices
 * with their cached values, and after a restart {@link #resumeFrom(long)} at the step of the
 * trainer's own checkpoint gives exactly the batches an uninterrupted run would have had. As an
 * {@link Iterable} it never ends: a training loop stops at its own step count.
 *
 * <p>A request that times out (the session's shard moving after a node died, a busy cluster) is
 * asked again for up to {@link #ATTEMPTS} attempts; a step is asked again by first resuming the
 * session at it, so a retry never skips or repeats a step. A request that gets no answer after that
 * is a {@link SessionFailedException}; one the session refuses is an {@link
 * IllegalArgumentException}.
 */
public final class SessionClient implements Iterable<TrainingBatch> {
  private final TensorCacheClient client;
  private final ActorSystem<?> system;
  private final EntityRef<TrainerSession.Command> session;
  private final String cacheId;
  private final Duration timeout;
  private long expected = -1; // the step the next call of next() must serve
  private volatile TrainerSessionState.Opened opened; // what the session said last: its sampler

  /** How many times a request that timed out is sent before the failure is the caller's. */
  static final int ATTEMPTS = 3;

  SessionClient(
      TensorCacheClient client,
      ActorSystem<?> system,
      EntityRef<TrainerSession.Command> session,
      String cacheId,
      Duration timeout) {
    this.client = client;
    this.system = system;
    this.session = session;
    this.cacheId = cacheId;
    this.timeout = timeout;
  }

  /**
   * The next step of this rank, recorded as served, with its values.
   *
   * @throws SessionFailedException if the session did not answer in {@link #ATTEMPTS} attempts
   * @throws LookupFailedException if the step's values could not be looked up
   */
  public TrainingBatch next() {
    long step = expected;
    SessionStep served =
        retrying(
            attempt -> {
              if (attempt > 0) { // the lost request may have been served: serve the step again
                resume(step);
              }
              return ask("Next", TrainerSession.Next::new);
            });
    if (served.step() != step) {
      throw new IllegalStateException(
          "trainer session "
              + session.getEntityId()
              + " served step "
              + served.step()
              + ", expected "
              + step
              + ": is another process using the same run and rank?");
    }
    expected = step + 1;
    prefetch(step + 1);
    long started = System.nanoTime();
    Object[] ahead = client.local().takePrefetched(session.getEntityId(), step, served.indices());
    if (ahead != null) { // a lookup too, answered ahead of time
      client.local().metrics().lookupServed(NodeMetrics.LookupPath.MEMBER, started);
    }
    Batch values =
        ahead != null
            ? new Batch(client.local().spec(cacheId), served.indices(), ahead)
            : client.lookup(cacheId, served.indices());
    return new TrainingBatch(served.step(), served.epoch(), served.indices(), values);
  }

  /** Makes {@code step} (the trainer's checkpoint step) the next step served. */
  public SessionClient resumeFrom(long step) {
    retrying(attempt -> resume(step));
    return this;
  }

  private TrainerSessionState.Opened resume(long step) {
    TrainerSessionState.Opened opened =
        ask("ResumeFrom " + step, replyTo -> new TrainerSession.ResumeFrom(step, replyTo));
    expected = step;
    this.opened = opened;
    prefetch(step);
    return opened;
  }

  /** The step the next {@link #next()} serves. */
  public long nextStep() {
    return opened().nextStep();
  }

  @Override
  public Iterator<TrainingBatch> iterator() {
    return new Iterator<>() {
      @Override
      public boolean hasNext() {
        return true;
      }

      @Override
      public TrainingBatch next() {
        return SessionClient.this.next();
      }
    };
  }

  /** Opens the session: at step 0 when new, else at its next step with this world size. */
  SessionClient open(RunConfig config, int worldSize, int rank) {
    TrainerSessionState.Opened opened =
        retrying(
            attempt -> {
              TrainerSessionState state =
                  await(session.ask(TrainerSession.GetState::new, timeout), "read session state");
              long step = state instanceof TrainerSessionState.Opened o ? o.nextStep() : 0;
              return this.<TrainerSessionState.Opened>ask(
                  "Open",
                  replyTo -> new TrainerSession.Open(config, worldSize, rank, step, replyTo));
            });
    expected = opened.nextStep();
    this.opened = opened;
    prefetch(expected);
    return this;
  }

  /** Brings the ranges of the steps from {@code from} on into this node's hot tier. */
  private void prefetch(long from) {
    TrainerSessionState.Opened o = opened;
    if (o != null) {
      client.local().prefetch(session.getEntityId(), cacheId, o.sampler(), o.rank(), from);
    }
  }

  /** Runs {@code request} again when it times out, up to {@link #ATTEMPTS} times in all. */
  private <T> T retrying(IntFunction<T> request) {
    for (int attempt = 0; ; attempt++) {
      try {
        return request.apply(attempt);
      } catch (SessionFailedException e) {
        // only a timeout may be a lost reply worth asking again; other failures stay failures
        if (attempt + 1 >= ATTEMPTS
            || !(e.getCause() instanceof TimeoutException
                || e.getCause() instanceof AskTimeoutException)) {
          throw e;
        }
      }
    }
  }

  private TrainerSessionState.Opened opened() {
    TrainerSessionState state =
        await(session.ask(TrainerSession.GetState::new, timeout), "read session state");
    if (state instanceof TrainerSessionState.Opened o) {
      return o;
    }
    throw new IllegalStateException("trainer session " + session.getEntityId() + " is not open");
  }

  private <T> T ask(
      String what, Function<ActorRef<StatusReply<T>>, TrainerSession.Command> message) {
    return await(session.askWithStatus(message::apply, timeout), what);
  }

  /** Waits for {@code reply} to the request {@code what}; a refusal is the session's message. */
  private <T> T await(CompletionStage<T> reply, String what) {
    long waited = timeout.toMillis() + 1000; // the ask's own timeout comes first
    try {
      return reply.toCompletableFuture().get(waited, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof StatusReply.ErrorMessage) {
        throw new IllegalArgumentException(cause.getMessage(), cause);
      }
      throw new SessionFailedException(session.getEntityId(), what + " failed: " + cause, cause);
    } catch (TimeoutException e) {
      throw new SessionFailedException(
          session.getEntityId(), what + " got no answer in " + waited + " ms", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SessionFailedException(session.getEntityId(), what + " was interrupted", e);
    }
  }
}
