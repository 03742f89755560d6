package org.tensorcache.actors.session;

import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.javadsl.ActorContext;
import org.apache.pekko.actor.typed.javadsl.Behaviors;
import org.apache.pekko.cluster.sharding.typed.ShardingEnvelope;
import org.apache.pekko.cluster.sharding.typed.javadsl.ClusterSharding;
import org.apache.pekko.cluster.sharding.typed.javadsl.Entity;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityRef;
import org.apache.pekko.cluster.sharding.typed.javadsl.EntityTypeKey;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.persistence.typed.javadsl.CommandHandlerWithReply;
import org.apache.pekko.persistence.typed.javadsl.CommandHandlerWithReplyBuilder;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehaviorWithEnforcedReplies;
import org.apache.pekko.persistence.typed.javadsl.ReplyEffect;
import org.apache.pekko.persistence.typed.javadsl.RetentionCriteria;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.actors.session.TrainerSessionState.Event;
import org.tensorcache.actors.session.TrainerSessionState.Opened;
import org.tensorcache.actors.session.TrainerSessionState.Reopened;
import org.tensorcache.actors.session.TrainerSessionState.ResumedFrom;
import org.tensorcache.actors.session.TrainerSessionState.SessionOpened;
import org.tensorcache.actors.session.TrainerSessionState.StepServed;
import org.tensorcache.actors.session.TrainerSessionState.Unopened;
import org.tensorcache.store.serialization.KryoSerializable;

/**
 * Serves the steps of one rank of a training run and records them durably, so that a restarted
 * trainer gets exactly the steps it would have had: a sharded event-sourced entity with id {@code
 * <run id>/<rank>}, its state a {@link TrainerSessionState}, its indices from a {@link Sampler}.
 *
 * <p>{@link Open} declares the run's configuration and its world size from a step on (the rule for
 * changes of world size is in {@link TrainerSessionState}); {@link ResumeFrom} only moves back, and
 * the steps from there are served again exactly as before. A {@link Next} whose epoch permutation
 * is not cached has it computed on {@value TrainerSessionSettings#PERMUTATION_DISPATCHER}, and the
 * commands that come meanwhile wait, in order. The session serves indices only; the trainer fetches
 * their values from the tensor cache.
 */
public final class TrainerSession
    extends EventSourcedBehaviorWithEnforcedReplies<
        TrainerSession.Command, Event, TrainerSessionState> {

  /** Sharding type key of the sessions. */
  public static final EntityTypeKey<Command> ENTITY_KEY =
      EntityTypeKey.create(Command.class, "TrainerSession");

  private static final Logger log = LoggerFactory.getLogger(TrainerSession.class);

  /** A message to a session. */
  public interface Command extends KryoSerializable {}

  /**
   * Opens the session at {@code step} with {@code worldSize} ranks in force from that step on, and
   * makes {@code step} the next step to serve; replies with the session's state. {@code step} is 0
   * for a new run, the trainer's checkpoint step after a restart, or the step boundary of a change
   * of world size.
   */
  public record Open(
      RunConfig config, int worldSize, int rank, long step, ActorRef<StatusReply<Opened>> replyTo)
      implements Command {}

  /** Serves the next step's indices of this rank, a {@link SessionStep}, and records it served. */
  public record Next(ActorRef<StatusReply<SessionStep>> replyTo) implements Command {}

  /**
   * Makes {@code step} the next step to serve, for a trainer restarted from its checkpoint at that
   * step; the steps from there are served again exactly as before, with the recorded world sizes.
   */
  public record ResumeFrom(long step, ActorRef<StatusReply<Opened>> replyTo) implements Command {}

  /** Replies with the session's state. */
  public record GetState(ActorRef<TrainerSessionState> replyTo) implements Command {}

  private interface Internal extends Command {}

  /** The permutation that {@code next} waited for: {@code order}, or the failure computing it. */
  private record PermutationReady(Next next, long epoch, int[] order, Throwable failure)
      implements Internal {}

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
    return Behaviors.setup(context -> new TrainerSession(context, entityId, settings));
  }

  private final ActorContext<Command> context;
  private final String entityId;
  private final TrainerSessionSettings settings;
  private final SessionChecks checks;
  private final PermutationSupply permutations;
  private boolean waiting; // for the permutation of the step a Next asked for

  private TrainerSession(
      ActorContext<Command> context, String entityId, TrainerSessionSettings settings) {
    super(PersistenceId.of(ENTITY_KEY.name(), entityId));
    this.context = context;
    this.entityId = entityId;
    this.settings = settings;
    this.checks = new SessionChecks(entityId);
    this.permutations = new PermutationSupply(context.getSystem());
  }

  @Override
  public TrainerSessionState emptyState() {
    return Unopened.INSTANCE;
  }

  @Override
  public CommandHandlerWithReply<Command, Event, TrainerSessionState> commandHandler() {
    var builder = newCommandHandlerWithReplyBuilder();
    waitingForPermutation(builder);
    unopened(builder);
    opened(builder);
    return builder.build();
  }

  /**
   * Until the permutation a {@link Next} needs is computed, every other command waits. Only an open
   * session waits; the wait is this actor's, not part of the durable state.
   */
  private void waitingForPermutation(
      CommandHandlerWithReplyBuilder<Command, Event, TrainerSessionState> builder) {
    builder
        .forState(state -> waiting)
        .onCommand(PermutationReady.class, (state, ready) -> onReady((Opened) state, ready))
        .onAnyCommand(command -> Effect().stash());
  }

  private void unopened(
      CommandHandlerWithReplyBuilder<Command, Event, TrainerSessionState> builder) {
    builder
        .forState(Unopened.class::isInstance)
        .onCommand(Open.class, this::onFirstOpen)
        .onCommand(Next.class, next -> notOpen(next.replyTo(), "Next"))
        .onCommand(ResumeFrom.class, resume -> notOpen(resume.replyTo(), "ResumeFrom"))
        .onCommand(GetState.class, (state, get) -> Effect().reply(get.replyTo(), state));
  }

  private void opened(CommandHandlerWithReplyBuilder<Command, Event, TrainerSessionState> builder) {
    builder
        .forStateType(Opened.class)
        .onCommand(Open.class, this::onOpen)
        .onCommand(Next.class, this::onNext)
        .onCommand(ResumeFrom.class, this::onResumeFrom)
        .onCommand(GetState.class, (state, get) -> Effect().reply(get.replyTo(), state));
  }

  private ReplyEffect<Event, TrainerSessionState> onFirstOpen(Open open) {
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

  private ReplyEffect<Event, TrainerSessionState> onOpen(Opened state, Open open) {
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

  private ReplyEffect<Event, TrainerSessionState> onNext(Opened state, Next next) {
    long step = state.nextStep();
    Sampler sampler = state.sampler();
    try {
      checks.next(state, sampler);
    } catch (IllegalArgumentException e) {
      return Effect().reply(next.replyTo(), StatusReply.error(e.getMessage()));
    }
    long epoch = sampler.epochOf(step);
    int[] order = permutations.cached(sampler, epoch);
    if (order != null) {
      return serve(state, next, order);
    }
    // a shuffle of tens of millions of examples takes seconds, which on this thread would hold up
    // every actor of the dispatcher; the reply follows when the permutation is piped back
    waiting = true;
    context.pipeToSelf(
        permutations.compute(sampler, epoch),
        (computed, failure) -> new PermutationReady(next, epoch, computed, failure));
    return Effect().noReply();
  }

  private ReplyEffect<Event, TrainerSessionState> onReady(Opened state, PermutationReady ready) {
    waiting = false;
    if (ready.failure() == null) {
      return serve(state, ready.next(), ready.order());
    }
    Throwable failure = PermutationSupply.cause(ready.failure());
    log.error("{} could not compute the permutation of epoch {}", entityId, ready.epoch(), failure);
    String reason = "the permutation of epoch " + ready.epoch() + " failed: " + failure;
    StatusReply<SessionStep> refused =
        StatusReply.error(checks.cannotServe(state.nextStep(), reason));
    return Effect().reply(ready.next().replyTo(), refused).thenUnstashAll();
  }

  /** Serves the next step from {@code order}, the permutation of its epoch. */
  private ReplyEffect<Event, TrainerSessionState> serve(Opened state, Next next, int[] order) {
    long step = state.nextStep();
    Sampler sampler = state.sampler();
    SessionStep served =
        new SessionStep(step, sampler.epochOf(step), sampler.indices(step, state.rank(), order));
    // the commands that waited for a permutation follow, in the order they came; none usually
    return Effect()
        .persist(new StepServed(step))
        .thenReply(next.replyTo(), after -> StatusReply.success(served))
        .thenUnstashAll();
  }

  private ReplyEffect<Event, TrainerSessionState> onResumeFrom(Opened state, ResumeFrom resume) {
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

  private <T> ReplyEffect<Event, TrainerSessionState> notOpen(
      ActorRef<StatusReply<T>> replyTo, String command) {
    return Effect().reply(replyTo, StatusReply.error(checks.notOpen(command)));
  }

  @Override
  public EventHandler<TrainerSessionState, Event> eventHandler() {
    return newEventHandlerBuilder().forAnyState().onAnyEvent(TrainerSessionState::apply);
  }

  @Override
  public RetentionCriteria retentionCriteria() {
    return RetentionCriteria.snapshotEvery(settings.snapshotEvery(), settings.keepSnapshots());
  }
}
