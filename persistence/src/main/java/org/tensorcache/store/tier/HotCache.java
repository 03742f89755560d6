package org.tensorcache.store.tier;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.block.PublishedBlocks;
import org.tensorcache.store.spec.CacheSpec;

/**
 * What {@link HotTier} keeps per registered cache: its hot blocks, pins and place in the {@link
 * HotSet}, guarded by the tier's lock, and the use records that lookups write without it.
 */
final class HotCache {
  private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);

  /** A count stops here, so that halving brings any count down within 16 agings. */
  static final int MAX_USES = 1 << 16;

  final String id;
  final CacheSpec spec;
  final PublishedBlocks slots;
  final TierStats stats = new TierStats();

  // under the tier's lock
  final Block[] hot;
  final int[] pins;
  final int[] position;
  final long[] admitted;
  long bytesHeld;

  /**
   * Per range, the tier's clock at its last use, kept across evictions; written by lookups with
   * opaque stores, so never torn, and read racily by the evictor, which only needs an order.
   */
  final long[] lastUse;

  /**
   * Per range, its uses under LFU, kept across evictions so that a range often read warm is not the
   * first victim once admitted. Plain int writes from many threads: an increment lost to a race, or
   * to a halving, only makes a count a little low, which an eviction order tolerates.
   */
  final int[] uses;

  private final long fullBytes;
  private final long lastBytes;

  HotCache(String id, CacheSpec spec, PublishedBlocks slots) {
    this.id = id;
    this.spec = spec;
    this.slots = slots;
    int ranges = spec.rangeCount();
    this.hot = new Block[ranges];
    this.pins = new int[ranges];
    this.position = new int[ranges];
    Arrays.fill(position, -1);
    this.admitted = new long[ranges];
    this.lastUse = new long[ranges];
    this.uses = new int[ranges];
    this.fullBytes = bytesOf(spec, spec.rangeLength(0));
    this.lastBytes = bytesOf(spec, spec.rangeLength(ranges - 1));
  }

  /** The bytes a block of {@code range} holds: they depend on the range's length alone. */
  long bytes(int range) {
    return range == hot.length - 1 ? lastBytes : fullBytes;
  }

  /** Records a use of {@code range} at {@code now}, counting it too under LFU; takes no lock. */
  void touch(int range, long now, boolean count) {
    checkRange(range);
    // a range read over and over writes its cache line once per tick, not once per read
    if ((long) LONGS.getOpaque(lastUse, range) != now) {
      LONGS.setOpaque(lastUse, range, now);
    }
    if (count) {
      int u = uses[range];
      if (u < MAX_USES) {
        uses[range] = u + 1;
      }
    }
  }

  long lastUse(int range) {
    return (long) LONGS.getOpaque(lastUse, range);
  }

  /** Halves every count, so that uses long past weigh less than recent ones. */
  void age() {
    for (int r = 0; r < uses.length; r++) {
      uses[r] >>>= 1;
    }
  }

  void checkRange(int range) {
    if (range < 0 || range >= hot.length) {
      throw new IndexOutOfBoundsException(
          String.format("range %d out of range [0, %d) for cache '%s'", range, hot.length, id));
    }
  }

  /** The bytes of the element arrays and presence words of a block of {@code length} examples. */
  static long bytesOf(CacheSpec spec, int length) {
    long bytes = 0;
    for (FieldSpec f : spec.fields()) {
      bytes += (long) length * f.width() * f.dtype().bytes();
    }
    return bytes + (long) ((length + 63) >>> 6) * Long.BYTES;
  }

  /** Requires one empty slot per range of {@code spec}, so that every hot byte is accounted. */
  static void checkSlots(String cacheId, CacheSpec spec, PublishedBlocks slots) {
    if (slots.length() != spec.rangeCount()) {
      throw new IllegalArgumentException(
          String.format(
              "%d slots for cache '%s', expected its %d ranges",
              slots.length(), cacheId, spec.rangeCount()));
    }
    for (int r = 0; r < slots.length(); r++) {
      if (slots.get(r) != null) {
        throw new IllegalArgumentException(
            String.format(
                "range %d of cache '%s' already holds a block, expected empty slots", r, cacheId));
      }
    }
  }
}
