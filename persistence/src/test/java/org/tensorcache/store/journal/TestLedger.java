package org.tensorcache.store.journal;

import java.util.Arrays;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.persistence.typed.PersistenceId;
import org.apache.pekko.persistence.typed.SnapshotCompleted;
import org.apache.pekko.persistence.typed.javadsl.CommandHandlerWithReply;
import org.apache.pekko.persistence.typed.javadsl.EventHandler;
import org.apache.pekko.persistence.typed.javadsl.EventSourcedBehaviorWithEnforcedReplies;
import org.apache.pekko.persistence.typed.javadsl.ReplyEffect;
import org.apache.pekko.persistence.typed.javadsl.RetentionCriteria;
import org.apache.pekko.persistence.typed.javadsl.SignalHandler;
import org.tensorcache.store.serialization.KryoSerializable;

/** A ledger of amounts, event sourced, that proves the journal and snapshot store in tests. */
final class TestLedger
    extends EventSourcedBehaviorWithEnforcedReplies<
        TestLedger.Command, TestLedger.Event, TestLedger.State> {

  /** A command to the ledger. */
  interface Command extends KryoSerializable {}

  /** Appends an amount and replies with the new state. */
  record Add(long amount, ActorRef<State> replyTo) implements Command {}

  /** Replies with the current state. */
  record Get(ActorRef<State> replyTo) implements Command {}

  /** An event of the ledger. */
  interface Event extends KryoSerializable {}

  /** An amount was appended. */
  record Added(long amount) implements Event {}

  /** The amounts in order and their total. */
  record State(long total, long[] amounts) implements KryoSerializable {
    State add(long amount) {
      long[] next = Arrays.copyOf(amounts, amounts.length + 1);
      next[amounts.length] = amount;
      return new State(total + amount, next);
    }
  }

  /** Snapshot every this many events. */
  static final int SNAPSHOT_EVERY = 3;

  private final ActorRef<Long> snapshots;

  /**
   * Creates a ledger that tells {@code snapshots} the sequence number of every snapshot it saved.
   */
  static Behavior<Command> create(String id, ActorRef<Long> snapshots) {
    return new TestLedger(PersistenceId.of("TestLedger", id), snapshots);
  }

  private TestLedger(PersistenceId persistenceId, ActorRef<Long> snapshots) {
    super(persistenceId);
    this.snapshots = snapshots;
  }

  @Override
  public State emptyState() {
    return new State(0, new long[0]);
  }

  @Override
  public CommandHandlerWithReply<Command, Event, State> commandHandler() {
    return newCommandHandlerWithReplyBuilder()
        .forAnyState()
        .onCommand(Add.class, this::onAdd)
        .onCommand(Get.class, (state, get) -> Effect().reply(get.replyTo(), state))
        .build();
  }

  private ReplyEffect<Event, State> onAdd(State state, Add add) {
    return Effect().persist(new Added(add.amount())).thenReply(add.replyTo(), next -> next);
  }

  @Override
  public EventHandler<State, Event> eventHandler() {
    return newEventHandlerBuilder()
        .forAnyState()
        .onEvent(Added.class, (state, added) -> state.add(added.amount()))
        .build();
  }

  @Override
  public RetentionCriteria retentionCriteria() {
    return RetentionCriteria.snapshotEvery(SNAPSHOT_EVERY, 2);
  }

  @Override
  public SignalHandler<State> signalHandler() {
    return newSignalHandlerBuilder()
        .onSignal(
            SnapshotCompleted.class, (state, done) -> snapshots.tell(done.metadata().sequenceNr()))
        .build();
  }
}
