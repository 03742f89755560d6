package org.tensorcache.actors.cache;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.DispatcherSelector;
import org.apache.pekko.actor.typed.Extension;
import org.apache.pekko.actor.typed.ExtensionId;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.RunnerOutput;
import org.tensorcache.model.runner.TokenOutput;
import org.tensorcache.model.runner.TokenRunner;
import org.tensorcache.store.tier.HotTier;

/**
 * The node-local state of TensorCache in one ActorSystem: the caches this node knows with their
 * published blocks, the settings, the compute and I/O executors and the runners on them. What
 * starts the node's actors lives above the actor packages, in {@code org.tensorcache.actors}.
 */
public final class TensorCacheNode implements Extension {
  private final CacheRegistry registry = new CacheRegistry();
  private final Executor computeExecutor;
  private final Executor ioExecutor;
  private final ThreadLocal<Map<String, AutoCloseable>> runners =
      ThreadLocal.withInitial(java.util.HashMap::new);
  private final List<AutoCloseable> created = new CopyOnWriteArrayList<>();
  private final NodeSettings settings;
  private final MemorySettings memory;
  private final HotTier hotTier;
  private final ReplicaView replicaView = new ReplicaView(registry);
  private final RowTier rowTier;
  private final TieredView tieredView;
  private final NodeMetrics metrics = new NodeMetrics();
  private final java.util.concurrent.atomic.AtomicLong computedExamples =
      new java.util.concurrent.atomic.AtomicLong();
  private final ActorSystem<?> system;
  private volatile InetSocketAddress lookupPort;
  private final ReadWriteLock computing = new ReentrantReadWriteLock();
  private volatile boolean runnersClosed;

  /** How long a stopping node waits for running computations before it frees the runners. */
  private static final Duration CLOSE_WAIT = Duration.ofSeconds(30);

  private static final Logger log = LoggerFactory.getLogger(TensorCacheNode.class);

  private TensorCacheNode(ActorSystem<?> system) {
    this.system = system;
    this.settings = NodeSettings.create(system.settings().config());
    this.memory =
        MemorySettings.create(system.settings().config(), Runtime.getRuntime().maxMemory());
    this.hotTier = new HotTier(memory.budgetBytes(), memory.policy(), memory.poolBytes());
    this.computeExecutor =
        system
            .dispatchers()
            .lookup(DispatcherSelector.fromConfig("tensorcache.compute-dispatcher"));
    this.ioExecutor =
        system.dispatchers().lookup(DispatcherSelector.fromConfig("tensorcache.io-dispatcher"));
    this.tieredView = new TieredView(hotTier, ioExecutor, registry);
    this.rowTier = new RowTier(memory.budgetBytes());
    system.getWhenTerminated().thenRun(this::closeRunners);
  }

  /** The extension of {@code system}. */
  public static TensorCacheNode get(ActorSystem<?> system) {
    return Id.INSTANCE.apply(system);
  }

  /**
   * Makes a cache known to this node and chooses how it is replicated ({@link Replication#choose});
   * call before the node's actors start.
   */
  public void register(CacheDefinition definition) {
    registry.register(definition, Replication.choose(definition.spec(), this));
  }

  /** How the ranges of {@code cacheId} are replicated, or an error naming the known caches. */
  public Replication replication(String cacheId) {
    return registry.get(cacheId).replication();
  }

  /** The read view of the blocks gossiped to this node. */
  public ReplicaView replicaView() {
    return replicaView;
  }

  /** The read view of the caches replicated by reference: hot tier, then mapped segments. */
  TieredView tieredView() {
    return tieredView;
  }

  /** The hot tier: values of caches replicated by reference, within the memory budget. */
  public HotTier hotTier() {
    return hotTier;
  }

  /** The memory of rows of per-token caches, within the same budget as the hot tier. */
  public RowTier rowTier() {
    return rowTier;
  }

  /** What this node has done: counters and latency histograms that exporters read. */
  public NodeMetrics metrics() {
    return metrics;
  }

  /** The memory budget and prefetch settings. */
  public MemorySettings memory() {
    return memory;
  }

  /** Records where this node's binary lookup port listens, once it is bound. */
  public void lookupPortBound(InetSocketAddress address) {
    lookupPort = address;
  }

  /** The address of this node's binary lookup port, if it has one. */
  public Optional<InetSocketAddress> endpointAddress() {
    return Optional.ofNullable(lookupPort);
  }

  /** The definition of {@code cacheId}, or an error naming the known caches. */
  public CacheDefinition definition(String cacheId) {
    return registry.definition(cacheId);
  }

  /** Every registered cache. */
  public List<CacheDefinition> definitions() {
    return registry.definitions();
  }

  /** The caches this node knows, with their published blocks. */
  public CacheRegistry registry() {
    return registry;
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

  /** Counts examples of {@code cacheId} just computed on this node. */
  public void addComputed(String cacheId, long examples) {
    computedExamples.addAndGet(examples);
    metrics.examplesComputed(cacheId, examples);
  }

  /**
   * Computes {@code examples} of {@code cacheId} with the calling compute thread's runner. The
   * runners' native memory is freed only once no computation is running (the dispatcher's threads
   * outlive the actor system), and a computation after that fails instead of touching it.
   */
  public RunnerOutput compute(String cacheId, List<? extends Example> examples) {
    return whileOpen(cacheId, examples, () -> ((ModelRunner) runner(cacheId)).run(examples));
  }

  /** Like {@link #compute}, for a per-token cache: its rows, by the thread's token runner. */
  public TokenOutput computeRows(String cacheId, List<? extends Example> examples) {
    return whileOpen(cacheId, examples, () -> ((TokenRunner) runner(cacheId)).run(examples));
  }

  private <T> T whileOpen(
      String cacheId, List<? extends Example> examples, java.util.function.Supplier<T> run) {
    Lock lock = computing.readLock();
    lock.lock();
    try {
      if (runnersClosed) {
        throw new IllegalStateException(
            "node is stopping: " + examples.size() + " examples of '" + cacheId + "' not computed");
      }
      return run.get();
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
      for (AutoCloseable r : created) {
        try {
          r.close();
        } catch (Exception e) {
          log.warn("runner {} not closed: {}", r, e.toString());
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /** The calling compute thread's runner for {@code cacheId}, made on first use. */
  private AutoCloseable runner(String cacheId) {
    return runners
        .get()
        .computeIfAbsent(
            cacheId,
            id -> {
              CacheDefinition d = definition(id);
              AutoCloseable r = d.tokens() != null ? d.tokens().runners().get() : d.runners().get();
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
