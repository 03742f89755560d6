package org.tensorcache.actors.coordinator;

import java.util.Arrays;
import java.util.Objects;
import org.tensorcache.store.serialization.KryoSerializable;

/**
 * One cache's coverage, as the coordinator reports it ({@link Coordinator.GetStatus}).
 *
 * @param restored whether the coordinator's restore of the cache's segments at its start is over
 * @param unpersistedMillis how long the oldest range complete in the replicas has waited for its
 *     segment to be recorded persisted (0: none waits)
 * @param rangeStates one of {@link #MISSING}, {@link #COMPUTING}, {@link #COMPLETE}, {@link
 *     #PERSISTED}, {@link #REJECTED} per range
 */
public record CacheStatus(
    String cacheId,
    long examples,
    long present,
    int ranges,
    int completeRanges,
    int persistedRanges,
    boolean filling,
    boolean restored,
    long unpersistedMillis,
    byte[] rangeStates)
    implements KryoSerializable {
  /** A range none of whose examples is present. */
  public static final byte MISSING = 0;

  /** A range some of whose examples are present. */
  public static final byte COMPUTING = 1;

  /** A range whose examples are all present in the replicas, its segment not recorded yet. */
  public static final byte COMPLETE = 2;

  /** A range whose segment is written, recorded and (after a start) checked. */
  public static final byte PERSISTED = 3;

  /** A range whose segment failed its checks at restore and is not complete again yet. */
  public static final byte REJECTED = 4;

  /** Equal when every component is, the range states by content. */
  @Override
  public boolean equals(Object o) {
    return o instanceof CacheStatus c
        && cacheId.equals(c.cacheId)
        && examples == c.examples
        && present == c.present
        && ranges == c.ranges
        && completeRanges == c.completeRanges
        && persistedRanges == c.persistedRanges
        && filling == c.filling
        && restored == c.restored
        && unpersistedMillis == c.unpersistedMillis
        && Arrays.equals(rangeStates, c.rangeStates);
  }

  @Override
  public int hashCode() {
    return Objects.hash(cacheId, present, persistedRanges) + 31 * Arrays.hashCode(rangeStates);
  }

  @Override
  public String toString() {
    return String.format(
        "CacheStatus[%s: %d of %d present, ranges %d, complete %d, persisted %d, filling %b,"
            + " restored %b, unpersisted for %d ms, states %s]",
        cacheId,
        present,
        examples,
        ranges,
        completeRanges,
        persistedRanges,
        filling,
        restored,
        unpersistedMillis,
        Arrays.toString(rangeStates));
  }

  /** Ranges in {@code state}. */
  public int rangesIn(byte state) {
    int n = 0;
    for (byte s : rangeStates) {
      n += s == state ? 1 : 0;
    }
    return n;
  }
}
