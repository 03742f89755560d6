package org.tensorcache.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.tensorcache.actors.replica.TierReporter;
import org.tensorcache.store.tier.Tier;
import org.tensorcache.store.tier.TierStats;

/**
 * The {@code memory (per node)} section of {@code status}: per node its hot tier (bytes held of the
 * budget, the peak, the eviction policy), and below it one line per cache replicated by reference
 * with its hits per tier, evictions, admissions and mean prefetch lead.
 */
final class MemoryReport {
  private MemoryReport() {}

  /** The lines of the section, heading first, for the nodes that answered. */
  static List<String> lines(List<TierReporter.TierReport> reports) {
    List<String> lines = new ArrayList<>();
    lines.add("memory (per node)");
    if (reports.isEmpty()) {
      lines.add("  no node answered");
    }
    for (TierReporter.TierReport r : reports) {
      lines.add(
          String.format(
              "  %s  held %s / %s  peak %s  policy %s",
              r.node(),
              bytes(r.bytesHeld()),
              bytes(r.budgetBytes()),
              bytes(r.peakBytesHeld()),
              r.policy()));
      if (r.caches().length == 0) {
        lines.add("    no cache replicated by reference");
      }
      for (TierReporter.CacheTiers c : r.caches()) {
        lines.add("    " + describe(c.cacheId(), c.stats()));
      }
    }
    return lines;
  }

  /**
   * One cache's line, its parts two spaces apart: the cache id, {@code hits hot/warm/cold
   * 9200/640/160 (92.0% hot)}, {@code evictions 31}, {@code admissions 96}, {@code prefetch lead
   * 6.2 steps}; a share or lead with nothing to divide is {@code -}.
   */
  static String describe(String cacheId, TierStats.Snapshot s) {
    long hits = s.hotHits() + s.warmHits() + s.coldHits();
    double lead = s.meanPrefetchLead();
    return String.format(
        "%s  hits hot/warm/cold %d/%d/%d (%s hot)  evictions %d  admissions %d  prefetch lead %s",
        cacheId,
        s.hits(Tier.HOT),
        s.hits(Tier.WARM),
        s.hits(Tier.COLD),
        hits == 0 ? "-" : String.format(Locale.ROOT, "%.1f%%", 100.0 * s.hotHits() / hits),
        s.evictions(),
        s.admissions(),
        Double.isNaN(lead) ? "-" : String.format(Locale.ROOT, "%.1f steps", lead));
  }

  /** A byte count in B, KiB, MiB or GiB, with one decimal above bytes: {@code 1.5 GiB}. */
  static String bytes(long n) {
    String[] units = {"KiB", "MiB", "GiB"};
    if (n < 1024) {
      return n + " B";
    }
    double v = n;
    int u = -1;
    while (u < units.length - 1 && v >= 1024) {
      v /= 1024;
      u++;
    }
    return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
  }
}
