package org.tensorcache.actors.lookup;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;
import org.apache.pekko.pattern.StatusReply;
import org.tensorcache.actors.session.RunConfig;
import org.tensorcache.actors.session.SessionStep;
import org.tensorcache.actors.session.TrainerSession;
import org.tensorcache.actors.session.TrainerSessionState;
import org.tensorcache.store.spec.CacheSpec;

/**
 * Serves the lookup port's session ops ({@link SessionWire}) on the connection's thread: each asks
 * the rank's sharded {@link TrainerSession}, as a member's session client does, and a step's values
 * come through the node's {@link LocalLookup}. A request the session refuses is a BAD_REQUEST; one
 * it does not answer in time is FAILED, and the client resumes at its step before asking again, so
 * that no step is skipped or repeated.
 */
final class SessionPort {
  private final ActorSystem<?> system;
  private final LocalLookup lookup;
  private final Duration timeout;

  /** Each session's last known state on this node, for its sampler: prefetch needs it. */
  private final java.util.Map<String, TrainerSessionState.Opened> opened =
      new java.util.concurrent.ConcurrentHashMap<>();

  SessionPort(ActorSystem<?> system, LocalLookup lookup) {
    this.system = system;
    this.lookup = lookup;
    this.timeout = lookup.settings().lookupTimeout();
  }

  /** Answers a session request; bad input throws IllegalArgumentException, no answer a failure. */
  ByteBuffer answer(LookupWire.Request r, LookupFrames frames) {
    SessionWire.Args a = r.session();
    CacheSpec spec = lookup.spec(r.cacheId());
    EntityRef<TrainerSession.Command> session = TrainerSession.entityRef(system, a.run(), a.rank());
    String id = TrainerSession.entityId(a.run(), a.rank());
    if (r.op() == SessionWire.OPEN) {
      RunConfig config = new RunConfig(spec.n(), a.seed(), a.globalBatch(), r.cacheId());
      TrainerSessionState state = await(session.ask(TrainerSession.GetState::new, timeout), id);
      long step = state instanceof TrainerSessionState.Opened o ? o.nextStep() : 0;
      TrainerSessionState.Opened opened =
          ask(
              session,
              id,
              to -> new TrainerSession.Open(config, a.worldSize(), a.rank(), step, to));
      prefetch(id, r.cacheId(), opened, opened.nextStep());
      return SessionWire.encodeNextStep(frames, opened.nextStep());
    }
    if (r.op() == SessionWire.RESUME) {
      TrainerSessionState.Opened opened =
          ask(session, id, to -> new TrainerSession.ResumeFrom(a.step(), to));
      prefetch(id, r.cacheId(), opened, opened.nextStep());
      return SessionWire.encodeNextStep(frames, opened.nextStep());
    }
    LookupWire.checkVersionCarries(r.version(), r.cacheId(), spec); // before the step is taken
    SessionStep step = ask(session, id, TrainerSession.Next::new);
    if (step.step() != a.step()) {
      throw new IllegalArgumentException(
          String.format(
              "trainer session %s served step %d, expected %d: resume at %d first, or is another"
                  + " process using the same run and rank?",
              id, step.step(), a.step(), a.step()));
    }
    TrainerSessionState.Opened known = opened.get(id);
    if (known == null) { // opened through another node: ask once
      try {
        TrainerSessionState state = await(session.ask(TrainerSession.GetState::new, timeout), id);
        known = state instanceof TrainerSessionState.Opened o ? o : null;
      } catch (LookupFailedException unanswered) {
        known = null; // the step is served all the same, only not ahead of time
      }
    }
    prefetch(id, r.cacheId(), known, step.step() + 1);
    Object[] values = lookup.takePrefetched(id, step.step(), step.indices());
    if (values == null) {
      values = LookupChecks.newValues(spec, step.indices().length);
      lookup.lookupInto(r.cacheId(), step.indices(), values);
    }
    return SessionWire.encodeStep(frames, r.version(), spec, step, values);
  }

  /** Remembers the session's sampler and prefetches its steps from {@code from} on. */
  private void prefetch(String id, String cacheId, TrainerSessionState.Opened o, long from) {
    if (o != null) {
      opened.put(id, o);
      lookup.prefetch(id, cacheId, o.sampler(), o.rank(), from);
    }
  }

  private <T> T ask(
      EntityRef<TrainerSession.Command> session,
      String id,
      Function<ActorRef<StatusReply<T>>, TrainerSession.Command> message) {
    return await(session.askWithStatus(message::apply, timeout), id);
  }

  private <T> T await(CompletionStage<T> reply, String id) {
    long waited = timeout.toMillis() + 1000;
    try {
      return reply.toCompletableFuture().get(waited, TimeUnit.MILLISECONDS);
    } catch (ExecutionException e) {
      if (e.getCause() instanceof StatusReply.ErrorMessage refused) {
        throw new IllegalArgumentException(refused.getMessage(), refused);
      }
      throw new LookupFailedException("trainer session " + id + ": " + e.getCause(), e.getCause());
    } catch (TimeoutException e) {
      throw new LookupFailedException(
          "trainer session " + id + " got no answer in " + waited + " ms", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LookupFailedException("trainer session " + id + ": interrupted", e);
    }
  }
}
