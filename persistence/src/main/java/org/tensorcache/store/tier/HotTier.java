package org.tensorcache.store.tier;

import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.block.PublishedBlocks;
import org.tensorcache.store.spec.CacheSpec;

/**
 * The hot tier of a node: the blocks held in memory, within a budget of bytes shared by all the
 * node's caches, published in each cache's {@link PublishedBlocks} so that lookups gather from them
 * at memory speed. One per node; thread-safe.
 *
 * <p>{@link #admit} makes a block hot and evicts other ranges, of any cache, by the {@link
 * EvictionPolicy} until the bytes held are within the budget; a pinned range and the range being
 * admitted are never evicted, and an admission that cannot fit changes nothing. Eviction happens
 * only there and in {@link #reserve}: a node whose caches all fit never evicts.
 *
 * <p><b>Uses.</b> {@link #touch} takes no lock and allocates nothing. It stamps a tick that only
 * admissions advance (not a counter every reading core would fight for): eviction happens only at
 * admissions, so one admission is the resolution it needs; ties go in admission order. Under LFU a
 * touch also counts the use with plain stores (a lost increment makes a count a little low, which
 * an eviction order tolerates); every {@value #DEFAULT_AGING_PERIOD} admissions all counts are
 * halved, so a range hot once and never since falls behind (counts stop at 2^16).
 *
 * <p><b>Ownership.</b> An admitted block becomes the tier's: nobody may change it, and once it is
 * evicted its arrays go to the {@link ArrayPool} (held on top of the budget) and are written into a
 * later block. The tier is the only writer of a registered cache's slots. A lookup that copies out
 * of a hot block keeps the copy only if the slot still holds the same block ({@link
 * OptimisticRead}); a reader that cannot re-check pins the range while it reads.
 */
public final class HotTier {
  /** Admissions between two halvings of the LFU counts. */
  static final int DEFAULT_AGING_PERIOD = 256;

  private final TierBudget budget;
  private final EvictionPolicy policy;
  private final ArrayPool pool;
  private final int agingPeriod;
  private final ConcurrentHashMap<String, HotCache> caches = new ConcurrentHashMap<>();

  // under the lock (this)
  private final HotSet hotSet = new HotSet();
  private long admissions;
  private long sinceAging;

  /** The tick of {@link #touch}; advanced under the lock, once per admission. */
  private volatile long clock = 1;

  /** A tier of {@code budgetBytes} whose pool of recycled arrays holds up to an eighth of it. */
  public HotTier(long budgetBytes, EvictionPolicy policy) {
    this(budgetBytes, policy, budgetBytes / 8);
  }

  /** A tier of {@code budgetBytes} with a pool of {@code poolBytes} (0: arrays are not reused). */
  public HotTier(long budgetBytes, EvictionPolicy policy, long poolBytes) {
    this(budgetBytes, policy, poolBytes, DEFAULT_AGING_PERIOD);
  }

  HotTier(long budgetBytes, EvictionPolicy policy, long poolBytes, int agingPeriod) {
    this.budget = new TierBudget(budgetBytes);
    if (policy == null) {
      throw new IllegalArgumentException("eviction policy missing, expected LRU or LFU");
    }
    this.policy = policy;
    this.pool = new ArrayPool(poolBytes);
    this.agingPeriod = agingPeriod;
  }

  /**
   * Registers cache {@code cacheId}: the tier publishes its admitted blocks into {@code slots} and
   * clears evicted ones. The slots must hold no block yet, so that every hot byte is accounted.
   */
  public synchronized void register(String cacheId, CacheSpec spec, PublishedBlocks slots) {
    if (caches.containsKey(cacheId)) {
      throw new IllegalArgumentException("cache '" + cacheId + "' is already registered");
    }
    HotCache.checkSlots(cacheId, spec, slots);
    caches.put(cacheId, new HotCache(cacheId, spec, slots));
  }

  /**
   * Drops cache {@code cacheId}: its slots are cleared and its bytes released, pins or not; its
   * arrays are not recycled, as a pinned reader may still read them.
   */
  public synchronized void unregister(String cacheId) {
    HotCache c = cache(cacheId);
    for (int r = 0; r < c.hot.length; r++) {
      if (c.hot[r] != null) {
        c.slots.compareAndClear(r, c.hot[r]);
        drop(c, r);
      }
    }
    caches.remove(cacheId);
  }

  /**
   * Makes {@code block}, which nobody changes afterwards, the hot block of its range of cache
   * {@code cacheId}, evicting other ranges by the policy as the budget requires. Returns false,
   * changing nothing, when evicting every range that is neither pinned nor this one would not make
   * room. A block replacing its range's hot block keeps its place in the budget (the bytes of a
   * block depend on its range alone) and counts as a use; the replaced block is not recycled.
   */
  public synchronized boolean admit(String cacheId, Block block) {
    HotCache c = cache(cacheId);
    if (block.spec() != c.spec && !block.spec().equals(c.spec)) {
      throw new IllegalArgumentException(
          String.format(
              "block of cache '%s' admitted to cache '%s' of spec %s, expected that spec",
              block.spec().name(), cacheId, c.spec));
    }
    int r = block.range();
    Block old = c.hot[r];
    long need = budget.excessWith(old == null ? c.bytes(r) : 0);
    if (need > 0 && hotSet.evictableBytes(c, r) < need) {
      c.stats.rejected();
      return false;
    }
    evictFor(need, c, r);
    if (old != block) {
      c.slots.setRelease(r, block);
      c.hot[r] = block;
    }
    if (old == null) {
      hotSet.add(c, r);
      account(c, c.bytes(r));
    }
    c.admitted[r] = admissions++;
    c.touch(r, clock, policy == EvictionPolicy.LFU);
    clock = clock + 1; // only this thread writes it: under the lock
    c.stats.admitted();
    if (policy == EvictionPolicy.LFU && ++sinceAging >= agingPeriod) {
      sinceAging = 0;
      caches.values().forEach(HotCache::age);
    }
    return true;
  }

  /**
   * Holds {@code bytes} of the budget for values kept outside blocks (the rows a session prefetched
   * for its next steps), evicting unpinned ranges by the policy to make room; returns false,
   * changing nothing, when that cannot make room. Reserved bytes are never evicted: {@link
   * #release} gives them back.
   */
  public synchronized boolean reserve(long bytes) {
    long need = budget.excessWith(bytes);
    if (need > 0 && hotSet.evictableBytes(null, -1) < need) {
      return false;
    }
    evictFor(need, null, -1);
    budget.add(bytes);
    return true;
  }

  /** Gives back bytes held by {@link #reserve}. */
  public synchronized void release(long bytes) {
    budget.add(-bytes);
  }

  /** Records a use of {@code range} by a lookup: no lock, no allocation. */
  public void touch(String cacheId, int range) {
    cache(cacheId).touch(range, clock, policy == EvictionPolicy.LFU);
  }

  /**
   * Protects {@code range} from eviction until a matching {@link #unpin}; pins count. The range
   * need not be hot: a pin taken before its admission protects it once admitted.
   */
  public synchronized void pin(String cacheId, int range) {
    HotCache c = cache(cacheId);
    c.checkRange(range);
    c.pins[range]++;
  }

  /** Releases one pin of {@code range}. */
  public synchronized void unpin(String cacheId, int range) {
    HotCache c = cache(cacheId);
    c.checkRange(range);
    if (c.pins[range] == 0) {
      throw new IllegalStateException(
          String.format("range %d of cache '%s' is not pinned, expected a pin", range, cacheId));
    }
    c.pins[range]--;
  }

  /** Whether {@code range} of {@code cacheId} is hot. */
  public synchronized boolean isHot(String cacheId, int range) {
    HotCache c = cache(cacheId);
    c.checkRange(range);
    return c.hot[range] != null;
  }

  /** Evicts {@code range} now; false when it is not hot or is pinned. */
  public synchronized boolean evict(String cacheId, int range) {
    HotCache c = cache(cacheId);
    c.checkRange(range);
    if (c.hot[range] == null || c.pins[range] > 0) {
      return false;
    }
    evictRange(c, range);
    return true;
  }

  /**
   * Recycled arrays for a block of {@code range} of {@code spec}, or null: see {@link
   * ArrayPool#takeArrays}.
   */
  public Object[] takeArrays(CacheSpec spec, int range) {
    return pool.takeArrays(spec, range);
  }

  /** The pool of recycled arrays, for {@link MappedSegment#toBlock(ArrayPool)}. */
  public ArrayPool pool() {
    return pool;
  }

  /** Whether cache {@code cacheId} is registered with this tier. */
  public boolean holds(String cacheId) {
    return caches.containsKey(cacheId);
  }

  /** The statistics of cache {@code cacheId}. */
  public TierStats stats(String cacheId) {
    return cache(cacheId).stats;
  }

  /** The bytes of the hot blocks of every cache. */
  public long bytesHeld() {
    return budget.held();
  }

  /** The most bytes ever held; never above the budget. */
  public long peakBytesHeld() {
    return budget.peak();
  }

  /** The budget of the hot tier in bytes. */
  public long budgetBytes() {
    return budget.budgetBytes();
  }

  /** The eviction policy. */
  public EvictionPolicy policy() {
    return policy;
  }

  /** The bytes {@code block} holds: its elements, and 8 per presence word (headers aside). */
  public static long bytesOf(Block block) {
    return HotCache.bytesOf(block.spec(), block.length());
  }

  /**
   * Evicts ranges by the policy until {@code need} bytes are freed, never {@code range} of {@code
   * c} (none when {@code c} is null); the caller has checked that they can be.
   */
  private void evictFor(long need, HotCache c, int range) {
    while (need > 0) {
      int i = hotSet.victim(policy, c, range);
      need -= hotSet.cache(i).bytes(hotSet.range(i));
      evictRange(hotSet.cache(i), hotSet.range(i));
    }
  }

  /** Clears {@code range}'s slot, then recycles the block's arrays: the protocol's order. */
  private void evictRange(HotCache c, int range) {
    Block block = c.hot[range];
    drop(c, range);
    c.stats.evicted();
    if (c.slots.compareAndClear(range, block)) {
      for (int f = 0; f < c.spec.fields().size(); f++) {
        pool.offer(block.elementArray(f));
      }
    }
  }

  private void drop(HotCache c, int range) {
    c.hot[range] = null;
    hotSet.remove(c, range);
    account(c, -c.bytes(range));
  }

  private void account(HotCache c, long bytes) {
    budget.add(bytes);
    c.bytesHeld += bytes;
    c.stats.held(c.bytesHeld);
  }

  private HotCache cache(String cacheId) {
    HotCache c = caches.get(cacheId);
    if (c == null) {
      throw new IllegalArgumentException(
          "cache '"
              + cacheId
              + "' is not registered, expected one of "
              + new TreeSet<>(caches.keySet()));
    }
    return c;
  }
}
