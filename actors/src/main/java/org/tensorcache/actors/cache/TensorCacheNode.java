package org.tensorcache.actors.cache;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.apache.pekko.Done;
import org.apache.pekko.actor.CoordinatedShutdown;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.Extension;
import org.apache.pekko.actor.typed.ExtensionId;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.receptionist.Receptionist;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.actors.lookup.LookupActor;
import org.tensorcache.actors.lookup.LookupEndpoint;
import org.tensorcache.actors.replica.ReplicaPublisher;
import org.tensorcache.actors.replica.ReplicaView;
import org.tensorcache.actors.session.TrainerSession;
import org.tensorcache.actors.shard.ShardActor;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.RunnerOutput;
import org.tensorcache.store.journal.JournalSchema;

/**
 * The node-local services of TensorCache in one ActorSystem: the caches this node knows, the
 * published read view of the replicated blocks, and the compute and I/O executors.
 */
public final class TensorCacheNode implements Extension {
  private final Map<String, CacheDefinition> caches = new ConcurrentHashMap<>();
  private final ReplicaView view = new ReplicaView();
  private final Executor computeExecutor;
  private final Executor ioExecutor;
  private final ThreadLocal<Map<String, ModelRunner>> runners =
      ThreadLocal.withInitial(java.util.HashMap::new);
  private final List<ModelRunner> created = new CopyOnWriteArrayList<>();
  private final NodeSettings settings;
  private final java.util.concurrent.atomic.AtomicLong computedExamples =
      new java.util.concurrent.atomic.AtomicLong();
  private final ActorSystem<?> system;
  private volatile LookupEndpoint endpoint;
  private final ReadWriteLock computing = new ReentrantReadWriteLock();
  private volatile boolean runnersClosed;

  /** How long a stopping node waits for running computations before it frees the runners. */
  private static final Duration CLOSE_WAIT = Duration.ofSeconds(30);

  private static final Logger log = LoggerFactory.getLogger(TensorCacheNode.class);

  private TensorCacheNode(ActorSystem<?> system) {
    this.system = system;
    this.settings = NodeSettings.create(system.settings().config());
    this.computeExecutor =
        system
            .dispatchers()
            .lookup(DispatcherSelector.fromConfig("tensorcache.compute-dispatcher"));
    this.ioExecutor =
        system.dispatchers().lookup(DispatcherSelector.fromConfig("tensorcache.io-dispatcher"));
    system.getWhenTerminated().thenRun(this::closeRunners);
  }

  /** The extension of {@code system}. */
  public static TensorCacheNode get(ActorSystem<?> system) {
    return Id.INSTANCE.apply(system);
  }

  /** Makes a cache known to this node; call before the node's actors start. */
  public void register(CacheDefinition definition) {
    CacheDefinition before = caches.putIfAbsent(definition.cacheId(), definition);
    if (before != null && before != definition) {
      throw new IllegalStateException("cache " + definition.cacheId() + " is already registered");
    }
    view.register(definition.spec(), definition.cacheId());
  }

  /**
   * Starts this node's part of TensorCache once its caches are registered: the journal tables,
   * shard and session sharding, the coordinator singleton, and the replica publisher.
   */
  public ActorRef<Coordinator.Command> start() {
    JournalSchema.ensure(system);
    ShardActor.init(system);
    TrainerSession.init(system);
    system.systemActorOf(ReplicaPublisher.create(), "tensorcache-replica", Props.empty());
    // served from this node's replica to processes that hold none
    ActorRef<LookupActor.Command> lookup =
        system.systemActorOf(LookupActor.create(), LookupActor.NAME, Props.empty());
    system.receptionist().tell(Receptionist.register(LookupActor.SERVICE_KEY, lookup));
    startEndpoint(lookup);
    return Coordinator.init(system);
  }

  /** Binds the binary lookup port when it is configured; it closes as the node shuts down. */
  private void startEndpoint(ActorRef<LookupActor.Command> lookup) {
    LookupEndpoint.Settings s = LookupEndpoint.Settings.create(system.settings().config());
    if (s.port() < 0) {
      return;
    }
    try {
      endpoint = LookupEndpoint.start(system, lookup, s);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    CoordinatedShutdown.get(system)
        .addTask(
            CoordinatedShutdown.PhaseServiceUnbind(),
            "tensorcache-lookup-endpoint",
            () -> {
              endpoint.close();
              return CompletableFuture.completedFuture(Done.getInstance());
            });
    system.getWhenTerminated().thenRun(endpoint::close);
  }

  /** The address of this node's binary lookup port, if it has one. */
  public Optional<InetSocketAddress> endpointAddress() {
    LookupEndpoint e = endpoint;
    return e == null ? Optional.empty() : Optional.of(e.address());
  }

  /** The definition of {@code cacheId}, or an error naming the known caches. */
  public CacheDefinition definition(String cacheId) {
    CacheDefinition d = caches.get(cacheId);
    if (d == null) {
      throw new IllegalArgumentException(
          "unknown cache '" + cacheId + "', expected one of " + caches.keySet());
    }
    return d;
  }

  /** Every registered cache. */
  public List<CacheDefinition> definitions() {
    return List.copyOf(caches.values());
  }

  /**
   * Whether the cache's ranges are too large to gossip: then only their presence is replicated and
   * the values move point to point from the range's shard or its segment.
   */
  public boolean byReference(String cacheId) {
    var spec = definition(cacheId).spec();
    long rowBytes = 0;
    for (var f : spec.fields()) {
      rowBytes += (long) f.width() * f.dtype().bytes();
    }
    return rowBytes * spec.rangeSize() > settings.gossipBudget();
  }

  /** The read view that lookups gather from. */
  public ReplicaView view() {
    return view;
  }

  /** The dispatcher for forward passes: one thread per device, one runner per thread. */
  public Executor computeExecutor() {
    return computeExecutor;
  }

  /** The dispatcher for blocking file I/O (segment writes and reads). */
  public Executor ioExecutor() {
    return ioExecutor;
  }

  /** Node settings read from {@code tensorcache.*}. */
  public NodeSettings settings() {
    return settings;
  }

  /** How many examples this node's runners have computed since it started. */
  public long computedExamples() {
    return computedExamples.get();
  }

  /** Counts examples just computed on this node. */
  public void addComputed(long examples) {
    computedExamples.addAndGet(examples);
  }

  /**
   * Computes {@code examples} of {@code cacheId} with the calling compute thread's runner. The
   * runners' native memory is freed only once no computation is running (the dispatcher's threads
   * outlive the actor system), and a computation after that fails instead of touching it.
   */
  public RunnerOutput compute(String cacheId, List<? extends Example> examples) {
    Lock lock = computing.readLock();
    lock.lock();
    try {
      if (runnersClosed) {
        throw new IllegalStateException(
            "node is stopping: " + examples.size() + " examples of '" + cacheId + "' not computed");
      }
      return runner(cacheId).run(examples);
    } finally {
      lock.unlock();
    }
  }

  private void closeRunners() {
    Lock lock = computing.writeLock();
    try {
      if (!lock.tryLock(CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
        log.warn(
            "a computation still runs {} after the node stopped: runners left open", CLOSE_WAIT);
        return;
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    }
    try {
      runnersClosed = true;
      created.forEach(ModelRunner::close);
    } finally {
      lock.unlock();
    }
  }

  /** The calling compute thread's runner for {@code cacheId}, made on first use. */
  private ModelRunner runner(String cacheId) {
    return runners
        .get()
        .computeIfAbsent(
            cacheId,
            id -> {
              ModelRunner r = definition(id).runners().get();
              created.add(r);
              return r;
            });
  }

  private static final class Id extends ExtensionId<TensorCacheNode> {
    static final Id INSTANCE = new Id();

    @Override
    public TensorCacheNode createExtension(ActorSystem<?> system) {
      return new TensorCacheNode(system);
    }
  }
}
