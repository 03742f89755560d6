package org.tensorcache.store.tier;

import java.lang.invoke.VarHandle;
import java.lang.reflect.Array;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.spec.CacheSpec;

/**
 * The element arrays of evicted hot blocks, kept for the next block of the same shape so that
 * making a range hot from its segment does not allocate (and later collect) a block's worth of
 * arrays each time. Arrays are kept by Java element type and length (F16 and BF16 share {@code
 * short[]}), at most {@link #maxBytes()} in all; a pool of 0 bytes keeps nothing.
 *
 * <p><b>When reuse is safe.</b> A lookup may still be copying out of a block when it is evicted, so
 * an array must not be written again while such a copy could still be accepted. The tier and its
 * readers share this protocol, the optimistic read of a seqlock:
 *
 * <ol>
 *   <li>the evictor clears the range's slot in {@code PublishedBlocks} (a volatile compare-and-set)
 *       <em>before</em> it offers the block's arrays here, and no block object is ever published
 *       again once evicted;
 *   <li>{@link #takeArrays} hands an array out once, under this pool's lock, and then issues a
 *       release fence, so everything the taker writes into it is ordered after the slot was
 *       cleared;
 *   <li>a reader loads the slot with acquire, copies the values, issues {@link
 *       VarHandle#acquireFence()}, and loads the slot again: it keeps the copy only when the slot
 *       still holds the same block object, else it discards the copy (and reads again). {@link
 *       OptimisticRead} is that read.
 * </ol>
 *
 * <p>If the reader saw a value written into a recycled array, the fences order the clearing of the
 * slot before its second load, which therefore cannot return the old block: a copy that is kept was
 * read before any reuse. A reader that does not re-check (a codec writing a hot block to disk or to
 * the network) must pin the range for the duration instead; {@link HotTier} never evicts a pinned
 * range, and it never recycles a block that was replaced rather than evicted.
 *
 * <p>Thread-safe.
 */
public final class ArrayPool {
  private final long maxBytes;
  private final Map<Key, ArrayDeque<Pooled>> free = new HashMap<>();
  private long bytesHeld;
  private long offers;

  /** A pool that holds at most {@code maxBytes} of arrays; 0 keeps none. */
  public ArrayPool(long maxBytes) {
    if (maxBytes < 0) {
      throw new IllegalArgumentException(
          "array pool of " + maxBytes + " bytes, expected 0 or more");
    }
    this.maxBytes = maxBytes;
  }

  /** The most bytes of arrays the pool holds. */
  public long maxBytes() {
    return maxBytes;
  }

  /** The bytes of arrays the pool holds now. */
  public synchronized long bytesHeld() {
    return bytesHeld;
  }

  /**
   * One recycled array per field for a block of range {@code range} of {@code spec}, of the field's
   * dtype and {@code length * width} elements, or null when the pool lacks one of them (taking none
   * then). The arrays hold stale values: the taker overwrites every element before it publishes
   * them in a block. Each array is handed out once.
   */
  public Object[] takeArrays(CacheSpec spec, int range) {
    int length = spec.rangeLength(range);
    int fields = spec.fields().size();
    Key[] keys = new Key[fields];
    for (int f = 0; f < fields; f++) {
      FieldSpec field = spec.fields().get(f);
      keys[f] = new Key(arrayType(field.dtype()), length * field.width());
    }
    Object[] arrays = new Object[fields];
    synchronized (this) {
      for (int f = 0; f < fields; f++) {
        ArrayDeque<Pooled> q = free.get(keys[f]);
        if (q == null || q.size() < sameKeysUpTo(keys, f)) {
          return null; // two fields of one shape need two arrays
        }
      }
      for (int f = 0; f < fields; f++) {
        ArrayDeque<Pooled> q = free.get(keys[f]);
        arrays[f] = q.pollLast().array(); // the latest offered: the likeliest in cache
        bytesHeld -= keys[f].bytes();
        if (q.isEmpty()) {
          free.remove(keys[f]);
        }
      }
    }
    // orders the taker's writes into the arrays after the evictor cleared their block's slot
    VarHandle.releaseFence();
    return arrays;
  }

  /**
   * Keeps {@code array}, which no reader can accept values from any more (see the class comment),
   * for a later {@link #takeArrays}; where it does not fit, the oldest arrays make room, and an
   * array larger than the pool is dropped. Returns whether it was kept.
   */
  synchronized boolean offer(Object array) {
    Key key = new Key(array.getClass(), Array.getLength(array));
    long bytes = key.bytes();
    if (bytes > maxBytes) {
      return false;
    }
    while (bytesHeld + bytes > maxBytes) {
      dropOldest();
    }
    free.computeIfAbsent(key, k -> new ArrayDeque<>()).addLast(new Pooled(array, offers++));
    bytesHeld += bytes;
    return true;
  }

  /** Drops every array. */
  public synchronized void clear() {
    free.clear();
    bytesHeld = 0;
  }

  /** Drops the array offered first; shapes nobody takes any more leave the pool this way. */
  private void dropOldest() {
    Key oldest = null;
    long seq = Long.MAX_VALUE;
    for (Map.Entry<Key, ArrayDeque<Pooled>> e : free.entrySet()) {
      long s = e.getValue().peekFirst().seq();
      if (s < seq) {
        seq = s;
        oldest = e.getKey();
      }
    }
    ArrayDeque<Pooled> q = free.get(oldest);
    q.pollFirst();
    bytesHeld -= oldest.bytes();
    if (q.isEmpty()) {
      free.remove(oldest);
    }
  }

  /** How many of {@code keys[0..f]} equal {@code keys[f]}. */
  private static int sameKeysUpTo(Key[] keys, int f) {
    int n = 0;
    for (int g = 0; g <= f; g++) {
      n += keys[g].equals(keys[f]) ? 1 : 0;
    }
    return n;
  }

  /** The Java array class of a field of {@code t}. */
  static Class<?> arrayType(DType t) {
    return switch (t) {
      case F32 -> float[].class;
      case F16, BF16 -> short[].class;
      case I32 -> int[].class;
      case I64 -> long[].class;
    };
  }

  /** Arrays of one Java element type and length. */
  private record Key(Class<?> type, int length) {
    long bytes() {
      long element =
          type == long[].class ? 8 : type == short[].class ? 2 : type == byte[].class ? 1 : 4;
      return element * length;
    }
  }

  private record Pooled(Object array, long seq) {}
}
