package org.tensorcache.lease;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The member that explains every unreachability observation of a cluster: the one that each record
 * (observer finds subject unreachable) runs through, itself both an observer and a subject.
 *
 * <p>That is the picture of a member cut off one way. One that cannot receive hears no heartbeat
 * replies and finds every other member unreachable; its gossip still arrives, and each other member
 * finds it unreachable in turn. Pekko's Split Brain Resolver counts every member of such a cycle as
 * "indirectly connected" and, with lease-majority, downs them all, the healthy ones included.
 * Downing this one member alone resolves every observation.
 */
final class CutOffMember {
  private CutOffMember() {}

  /**
   * The member every one of {@code records} (observer to subject) runs through, when exactly one
   * does and it is both an observer and a subject; empty otherwise (no records, a clean split or a
   * crash with no cycle, or two members that would each explain them, as a single pair of records
   * between two members).
   */
  static <T> Optional<T> of(Collection<? extends Map.Entry<T, T>> records) {
    if (records.isEmpty()) {
      return Optional.empty();
    }
    Map.Entry<T, T> first = records.iterator().next();
    List<T> found = new ArrayList<>();
    for (T candidate : List.of(first.getKey(), first.getValue())) {
      if (explainsAll(candidate, records)) {
        found.add(candidate);
      }
    }
    return found.size() == 1 ? Optional.of(found.get(0)) : Optional.empty();
  }

  private static <T> boolean explainsAll(T m, Collection<? extends Map.Entry<T, T>> records) {
    boolean observes = false;
    boolean observed = false;
    for (Map.Entry<T, T> r : records) {
      if (r.getKey().equals(m)) {
        observes = true;
      } else if (r.getValue().equals(m)) {
        observed = true;
      } else {
        return false;
      }
    }
    return observes && observed;
  }
}
