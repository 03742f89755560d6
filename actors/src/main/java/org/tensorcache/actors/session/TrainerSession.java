package org.tensorcache.actors.session;

import java.util.Arrays;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.cluster.sharding.typed.ShardingEnvelope;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.persistence.typed.javadsl.CommandHandlerWithReply;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehaviorWithEnforcedReplies;
import org.apache.pekko.persistence.typed.javadsl.ReplyEffect;
import org.apache.pekko.persistence.typed.javadsl.RetentionCriteria;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.store.serialization.KryoSerializable;

/**
 * The durable position of one rank of a training run, a sharded event-sourced entity with id {@code
 * <run id>/<rank>}: serves the indices of each step from a {@link Sampler} and records the steps
 * served, so that a restarted trainer gets exactly the batches it would have had.
 *
 * <p>{@link Open} declares, at a step, the run's configuration and its world size from that step
 * on; the first open records the configuration, later ones must repeat it. World sizes are kept per
 * session in a {@link WorldSchedule}, and the ranks of a run do not talk to each other, so a change
 * of world size follows one rule: <b>every rank of the new world opens its session with the new
 * world size at the same step</b>, the step boundary where the change happens. A rank that joins or
 * rejoins the world opens there too, even ahead of the steps it served: its session then forgets
 * the world sizes before that step, which it took no part in. Then each step is sliced by one world
 * and every example of an epoch is served once across the ranks.
 *
 * <p>{@link ResumeFrom} only moves back: the steps from there are served again with the world sizes
 * recorded for them, exactly as before.
 *
 * <p>The session serves indices only; the trainer fetches their values from the tensor cache.
 */
public final class TrainerSession
    extends EventSourcedBehaviorWithEnforcedReplies<
        TrainerSession.Command, TrainerSession.Event, TrainerSession.State> {

  /** Sharding type key of the sessions. */
  public static final EntityTypeKey<Command> ENTITY_KEY =
      EntityTypeKey.create(Command.class, "TrainerSession");

  private static final Logger log = LoggerFactory.getLogger(TrainerSession.class);

  /** A message to a session. */
  public interface Command extends KryoSerializable {}

  /**
   * The configuration that every rank of a run shares and that never changes during the run.
   *
   * @param examples number of examples of the dataset
   * @param seed seed of the epoch orders
   * @param globalBatch examples per global step, across all ranks
   * @param cacheId the tensor cache the run reads its values from
   */
  public record RunConfig(long examples, long seed, int globalBatch, String cacheId)
      implements KryoSerializable {}

  /**
   * Opens the session at {@code step} with {@code worldSize} ranks in force from that step on, and
   * makes {@code step} the next step to serve; replies with the session's state. {@code step} is 0
   * for a new run, the trainer's checkpoint step after a restart, or the step boundary of a change
   * of world size.
   */
  public record Open(
      RunConfig config, int worldSize, int rank, long step, ActorRef<StatusReply<Opened>> replyTo)
      implements Command {}

  /** Serves the next step's indices of this rank and records the step as served. */
  public record Next(ActorRef<StatusReply<Batch>> replyTo) implements Command {}

  /**
   * Makes {@code step} the next step to serve, for a trainer restarted from its checkpoint at that
   * step; the steps from there are served again exactly as before, with the recorded world sizes.
   */
  public record ResumeFrom(long step, ActorRef<StatusReply<Opened>> replyTo) implements Command {}

  /** Replies with the session's state. */
  public record GetState(ActorRef<State> replyTo) implements Command {}

  /**
   * The indices one rank trains on at one global step.
   *
   * @param step the global step
   * @param epoch the epoch of the step
   * @param indices the example indices, in the order of the epoch's permutation
   */
  public record Batch(long step, long epoch, long[] indices) implements KryoSerializable {
    @Override
    public boolean equals(Object other) {
      return other instanceof Batch that
          && step == that.step
          && epoch == that.epoch
          && Arrays.equals(indices, that.indices);
    }

    @Override
    public int hashCode() {
      return 31 * Long.hashCode(step) + Arrays.hashCode(indices);
    }

    @Override
    public String toString() {
      return "Batch[step=%d, epoch=%d, indices=%s]"
          .formatted(step, epoch, Arrays.toString(indices));
    }
  }

  /** A persisted event of a session. */
  public interface Event extends KryoSerializable {}

  /** The session was opened for the first time. */
  public record SessionOpened(RunConfig config, int rank, long step, int worldSize)
      implements Event {}

  /**
   * The session was opened again at {@code step} with {@code worldSize} ranks from there on, a
   * restart or a change of world size; a step beyond the next one to serve is a rejoin.
   */
  public record Reopened(long step, int worldSize) implements Event {}

  /** The next step to serve was set back to {@code step}. */
  public record ResumedFrom(long step) implements Event {}

  /** Step {@code step} was served. */
  public record StepServed(long step) implements Event {}

  /** The state of a session. */
  public interface State extends KryoSerializable {}

  /** A session that was never opened. */
  public enum Unopened implements State {
    INSTANCE
  }

  /**
   * An open session.
   *
   * @param config the run's configuration
   * @param rank this session's rank
   * @param schedule the world sizes of the run from the step this rank first opened at
   * @param nextStep the step the next {@link Next} serves; the last step served is one less
   */
  public record Opened(RunConfig config, int rank, WorldSchedule schedule, long nextStep)
      implements State {
    /** Returns the last step served before {@link #nextStep()}, one less than it. */
    public long lastServed() {
      return nextStep - 1;
    }

    /** Returns the sampler of this session's run. */
    public Sampler sampler() {
      return new Sampler(config.examples(), config.seed(), config.globalBatch(), schedule);
    }

    Opened at(long step) {
      return new Opened(config, rank, schedule, step);
    }

    Opened reopen(long step, int worldSize) {
      // a rejoining rank took no part in the steps it skipped, so their world sizes are not its own
      WorldSchedule next =
          step > nextStep ? WorldSchedule.of(step, worldSize) : schedule.from(step, worldSize);
      return new Opened(config, rank, next, step);
    }
  }

  /** Returns the entity id of {@code rank} of run {@code runId}. */
  public static String entityId(String runId, int rank) {
    return runId + "/" + rank;
  }

  /** Initialises sharding of the sessions on {@code system} and returns the shard region. */
  public static ActorRef<ShardingEnvelope<Command>> init(ActorSystem<?> system) {
    TrainerSessionSettings settings = TrainerSessionSettings.create(system);
    Entity<Command, ShardingEnvelope<Command>> entity =
        Entity.of(ENTITY_KEY, context -> create(context.getEntityId(), settings));
    if (settings.role().isPresent()) {
      entity = entity.withRole(settings.role().get());
    }
    return ClusterSharding.get(system).init(entity);
  }

  /** Returns a reference to the session of {@code rank} of run {@code runId}. */
  public static EntityRef<Command> entityRef(ActorSystem<?> system, String runId, int rank) {
    return ClusterSharding.get(system).entityRefFor(ENTITY_KEY, entityId(runId, rank));
  }

  /** Creates the session with entity id {@code entityId}, of the form {@code <run id>/<rank>}. */
  public static Behavior<Command> create(String entityId, TrainerSessionSettings settings) {
    return new TrainerSession(entityId, settings);
  }

  private final String entityId;
  private final TrainerSessionSettings settings;
  private final SessionChecks checks;

  private TrainerSession(String entityId, TrainerSessionSettings settings) {
    super(PersistenceId.of(ENTITY_KEY.name(), entityId));
    this.entityId = entityId;
    this.settings = settings;
    this.checks = new SessionChecks(entityId);
  }

  @Override
  public State emptyState() {
    return Unopened.INSTANCE;
  }

  @Override
  public CommandHandlerWithReply<Command, Event, State> commandHandler() {
    var builder = newCommandHandlerWithReplyBuilder();
    builder
        .forState(Unopened.class::isInstance)
        .onCommand(Open.class, this::onFirstOpen)
        .onCommand(Next.class, next -> notOpen(next.replyTo(), "Next"))
        .onCommand(ResumeFrom.class, resume -> notOpen(resume.replyTo(), "ResumeFrom"))
        .onCommand(GetState.class, (state, get) -> Effect().reply(get.replyTo(), state));
    builder
        .forStateType(Opened.class)
        .onCommand(Open.class, this::onOpen)
        .onCommand(Next.class, this::onNext)
        .onCommand(ResumeFrom.class, this::onResumeFrom)
        .onCommand(GetState.class, (state, get) -> Effect().reply(get.replyTo(), state));
    return builder.build();
  }

  private ReplyEffect<Event, State> onFirstOpen(State state, Open open) {
    try {
      checks.firstOpen(open);
    } catch (IllegalArgumentException e) {
      return Effect().reply(open.replyTo(), StatusReply.error(e.getMessage()));
    }
    log.debug("{} opened at step {} with world size {}", entityId, open.step(), open.worldSize());
    return Effect()
        .persist(new SessionOpened(open.config(), open.rank(), open.step(), open.worldSize()))
        .thenReply(open.replyTo(), opened -> StatusReply.success((Opened) opened));
  }

  private ReplyEffect<Event, State> onOpen(Opened state, Open open) {
    try {
      checks.reopen(state, open);
    } catch (IllegalArgumentException e) {
      return Effect().reply(open.replyTo(), StatusReply.error(e.getMessage()));
    }
    Opened reopened = state.reopen(open.step(), open.worldSize());
    if (reopened.equals(state)) {
      return Effect().reply(open.replyTo(), StatusReply.success(state));
    }
    log.info(
        "{} reopened at step {} with world size {}; it was at step {} with {}",
        entityId,
        open.step(),
        open.worldSize(),
        state.nextStep(),
        state.schedule());
    return Effect()
        .persist(new Reopened(open.step(), open.worldSize()))
        .thenReply(open.replyTo(), opened -> StatusReply.success((Opened) opened));
  }

  private ReplyEffect<Event, State> onNext(Opened state, Next next) {
    long step = state.nextStep();
    Sampler sampler = state.sampler();
    long[] indices;
    try {
      indices = sampler.indices(step, state.rank());
    } catch (IllegalArgumentException e) {
      return Effect()
          .reply(
              next.replyTo(),
              StatusReply.error(
                  "trainer session "
                      + entityId
                      + " cannot serve step "
                      + step
                      + ": "
                      + e.getMessage()));
    }
    Batch batch = new Batch(step, sampler.epochOf(step), indices);
    return Effect()
        .persist(new StepServed(step))
        .thenReply(next.replyTo(), served -> StatusReply.success(batch));
  }

  private ReplyEffect<Event, State> onResumeFrom(Opened state, ResumeFrom resume) {
    try {
      checks.resume(state, resume.step());
    } catch (IllegalArgumentException e) {
      return Effect().reply(resume.replyTo(), StatusReply.error(e.getMessage()));
    }
    if (resume.step() == state.nextStep()) {
      return Effect().reply(resume.replyTo(), StatusReply.success(state));
    }
    return Effect()
        .persist(new ResumedFrom(resume.step()))
        .thenReply(resume.replyTo(), resumed -> StatusReply.success((Opened) resumed));
  }

  private <T> ReplyEffect<Event, State> notOpen(ActorRef<StatusReply<T>> replyTo, String command) {
    return Effect()
        .reply(
            replyTo,
            StatusReply.error(
                "trainer session " + entityId + " is not open; expected Open before " + command));
  }

  @Override
  public EventHandler<State, Event> eventHandler() {
    var builder = newEventHandlerBuilder();
    builder
        .forState(Unopened.class::isInstance)
        .onEvent(
            SessionOpened.class,
            opened ->
                new Opened(
                    opened.config(),
                    opened.rank(),
                    WorldSchedule.of(opened.step(), opened.worldSize()),
                    opened.step()));
    builder
        .forStateType(Opened.class)
        .onEvent(StepServed.class, (state, served) -> state.at(served.step() + 1))
        .onEvent(ResumedFrom.class, (state, resumed) -> state.at(resumed.step()))
        .onEvent(
            Reopened.class,
            (state, reopened) -> state.reopen(reopened.step(), reopened.worldSize()));
    return builder.build();
  }

  @Override
  public RetentionCriteria retentionCriteria() {
    return RetentionCriteria.snapshotEvery(settings.snapshotEvery(), settings.keepSnapshots());
  }
}
