package org.tensorcache.chaostests;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Time from each fault to serving again, per fault kind: from the moment the fault is injected to
 * the end of the first lookup of the episode's {@link LookupLoop} that began after it and returned
 * values (checked bit for bit like every other). Faults with no lookup loop across them (a damaged
 * segment, injected while the cluster is down, and a trainer kill) have no entry: the cluster's
 * recovery from those is the SIGKILL_ALL entry.
 */
final class RecoveryTimes {
  private final Map<String, List<Long>> byKind = new TreeMap<>();

  synchronized void add(String kind, long millis) {
    byKind.computeIfAbsent(kind, k -> new ArrayList<>()).add(millis);
  }

  /** Per kind: count, p50 (nearest rank) and max in ms. */
  synchronized Map<String, Map<String, Long>> summary() {
    Map<String, Map<String, Long>> out = new LinkedHashMap<>();
    byKind.forEach(
        (kind, times) -> {
          List<Long> sorted = new ArrayList<>(times);
          sorted.sort(null);
          Map<String, Long> m = new LinkedHashMap<>();
          m.put("count", (long) sorted.size());
          m.put("p50_ms", sorted.get((sorted.size() - 1) / 2));
          m.put("max_ms", sorted.get(sorted.size() - 1));
          out.put(kind, m);
        });
    return out;
  }

  /** The table printed under the faults. */
  void print(PrintStream out) {
    out.printf(
        "%-20s %6s %10s %10s  (fault to first lookup served after it)%n",
        "serving again", "count", "p50 ms", "max ms");
    summary()
        .forEach(
            (kind, m) ->
                out.printf(
                    "%-20s %6d %10d %10d%n",
                    kind, m.get("count"), m.get("p50_ms"), m.get("max_ms")));
  }
}
