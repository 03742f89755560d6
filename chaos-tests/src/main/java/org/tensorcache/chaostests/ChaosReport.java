package org.tensorcache.chaostests;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** What a chaos run did and found: every fault with its recovery times, and every invariant. */
final class ChaosReport {
  /** One injected fault; times in ms, -1 when not measured. */
  record Fault(int episode, String kind, boolean midFill, long servingAgainMs, long fillDoneMs) {}

  final List<Fault> faults = new ArrayList<>();
  final Map<String, String> invariants = new LinkedHashMap<>();
  long lost;
  long wrong;

  /** Steps of a resumed trainer run that it never received (from its checkpoint to the end). */
  long skipped;

  /**
   * Examples of persisted ranges computed again, plus trainer steps served out of place: a step
   * received twice or out of order, or one whose indices or values differ from the uninterrupted
   * run's.
   */
  long repeated;

  long corruptLoaded;
  long lookups;
  long lookupFailures;
  long recomputedAfterCorruption;
  long seconds;
  String failure;

  /** Ranges the journal recorded as persisted whose segment was missing or failed its checks. */
  long journalWithoutSegment;

  /** Per fault kind, the time to the first lookup served after it. */
  final RecoveryTimes recovery = new RecoveryTimes();

  /** Episodes that could not run here, with why (e.g. no permission to mount a tmpfs). */
  final Map<String, String> skippedEpisodes = new LinkedHashMap<>();

  synchronized void fault(Fault f) {
    faults.add(f);
  }

  /** Records an invariant and whether it held. */
  synchronized void check(String name, boolean held, String detail) {
    invariants.put(name, (held ? "ok" : "FAILED") + (detail.isEmpty() ? "" : " " + detail));
    if (!held && failure == null) {
      failure = name + ": " + detail;
    }
  }

  boolean ok() {
    return failure == null
        && lost == 0
        && wrong == 0
        && skipped == 0
        && repeated == 0
        && corruptLoaded == 0
        && lookupFailures == 0
        && journalWithoutSegment == 0;
  }

  /** The last line of a run. */
  String summary() {
    String counts =
        String.format(
            "faults=%d lost=%d wrong=%d skipped=%d repeated=%d corrupt_loaded=%d lookups=%d"
                + " failed_lookups=%d journal_without_segment=%d",
            faults.size(),
            lost,
            wrong,
            skipped,
            repeated,
            corruptLoaded,
            lookups,
            lookupFailures,
            journalWithoutSegment);
    return ok() ? "chaos: " + counts : "chaos: FAILED " + failure + " (" + counts + ")";
  }

  /** Prints the table and the invariants. */
  void print(PrintStream out) {
    out.printf("%-3s %-20s %-8s %12s %12s%n", "ep", "fault", "mid-fill", "serving ms", "filled ms");
    for (Fault f : faults) {
      out.printf(
          "%-3d %-20s %-8s %12d %12d%n",
          f.episode(), f.kind(), f.midFill(), f.servingAgainMs(), f.fillDoneMs());
    }
    Map<String, Integer> byKind = new TreeMap<>();
    faults.forEach(f -> byKind.merge(f.kind(), 1, Integer::sum));
    out.println("faults by kind: " + byKind);
    recovery.print(out);
    skippedEpisodes.forEach((k, v) -> out.printf("  skipped %s: %s%n", k, v));
    out.printf(
        "lookups=%d lookup_failures=%d recomputed_after_corruption=%d seconds=%d%n",
        lookups, lookupFailures, recomputedAfterCorruption, seconds);
    invariants.forEach((k, v) -> out.printf("  %-40s %s%n", k, v));
    out.println(summary());
  }

  /** Writes the report as JSON. */
  void write(Path file) throws IOException {
    Map<String, Object> m = new LinkedHashMap<>();
    Map<String, Integer> byKind = new TreeMap<>();
    faults.forEach(f -> byKind.merge(f.kind(), 1, Integer::sum));
    m.put("faults", faults.size());
    m.put("faults_by_kind", byKind);
    m.put("lost", lost);
    m.put("wrong", wrong);
    m.put("skipped", skipped);
    m.put("repeated", repeated);
    m.put("corrupt_loaded", corruptLoaded);
    m.put("lookups", lookups);
    m.put("lookup_failures", lookupFailures);
    m.put("recomputed_after_corruption", recomputedAfterCorruption);
    m.put("journal_without_segment", journalWithoutSegment);
    m.put("serving_again_ms", recovery.summary());
    m.put("skipped_episodes", skippedEpisodes);
    m.put("seconds", seconds);
    m.put("invariants", invariants);
    m.put("fault_log", faults);
    m.put("summary", summary());
    Files.createDirectories(file.toAbsolutePath().getParent());
    new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(file.toFile(), m);
  }
}
