package org.tensorcache.actors.session;

import org.tensorcache.store.serialization.KryoSerializable;

/**
 * The durable state of a trainer session and the events that change it: {@link Unopened} until the
 * first open, then {@link Opened}. Immutable; {@link #apply} gives the state after an event, on
 * recovery as when the event is persisted.
 *
 * <p>The first open records the run's configuration, later ones must repeat it. World sizes are
 * kept per session in a {@link WorldSchedule}, and the ranks of a run do not talk to each other, so
 * a change of world size follows one rule: <b>every rank of the new world opens its session with
 * the new world size at the same step</b>, the step boundary where the change happens. A rank that
 * joins or rejoins the world opens there too, even ahead of the steps it served: its session then
 * forgets the world sizes before that step, which it took no part in. Then each step is sliced by
 * one world and every example of an epoch is served once across the ranks.
 */
public sealed interface TrainerSessionState extends KryoSerializable
    permits TrainerSessionState.Unopened, TrainerSessionState.Opened {

  /**
   * Returns the state after {@code event}.
   *
   * @throws IllegalStateException if the event cannot follow this state
   */
  TrainerSessionState apply(Event event);

  /** A session that was never opened. */
  enum Unopened implements TrainerSessionState {
    INSTANCE;

    @Override
    public TrainerSessionState apply(Event event) {
      if (event instanceof SessionOpened opened) {
        return new Opened(
            opened.config(),
            opened.rank(),
            WorldSchedule.of(opened.step(), opened.worldSize()),
            opened.step());
      }
      throw unexpected(this, event);
    }
  }

  /**
   * An open session.
   *
   * @param config the run's configuration
   * @param rank this session's rank
   * @param schedule the world sizes of the run from the step this rank first opened at
   * @param nextStep the step the next {@link TrainerSession.Next} serves; the last step served is
   *     one less
   */
  record Opened(RunConfig config, int rank, WorldSchedule schedule, long nextStep)
      implements TrainerSessionState {
    /** Returns the last step served before {@link #nextStep()}, one less than it. */
    public long lastServed() {
      return nextStep - 1;
    }

    /** Returns the sampler of this session's run. */
    public Sampler sampler() {
      return new Sampler(config.examples(), config.seed(), config.globalBatch(), schedule);
    }

    @Override
    public TrainerSessionState apply(Event event) {
      if (event instanceof StepServed served) {
        return at(served.step() + 1);
      }
      if (event instanceof ResumedFrom resumed) {
        return at(resumed.step());
      }
      if (event instanceof Reopened reopened) {
        return reopen(reopened.step(), reopened.worldSize());
      }
      throw unexpected(this, event);
    }

    Opened at(long step) {
      return new Opened(config, rank, schedule, step);
    }

    /** Returns this session opened again at {@code step} with {@code worldSize} from there on. */
    Opened reopen(long step, int worldSize) {
      // a rejoining rank took no part in the steps it skipped, so their world sizes are not its own
      WorldSchedule next =
          step > nextStep ? WorldSchedule.of(step, worldSize) : schedule.from(step, worldSize);
      return new Opened(config, rank, next, step);
    }
  }

  /** A persisted event of a session. */
  sealed interface Event extends KryoSerializable
      permits SessionOpened, Reopened, ResumedFrom, StepServed {}

  /** The session was opened for the first time. */
  record SessionOpened(RunConfig config, int rank, long step, int worldSize) implements Event {}

  /**
   * The session was opened again at {@code step} with {@code worldSize} ranks from there on, a
   * restart or a change of world size; a step beyond the next one to serve is a rejoin.
   */
  record Reopened(long step, int worldSize) implements Event {}

  /** The next step to serve was set back to {@code step}. */
  record ResumedFrom(long step) implements Event {}

  /** Step {@code step} was served. */
  record StepServed(long step) implements Event {}

  private static IllegalStateException unexpected(TrainerSessionState state, Event event) {
    return new IllegalStateException(
        "event " + event + " cannot follow trainer session state " + state);
  }
}
