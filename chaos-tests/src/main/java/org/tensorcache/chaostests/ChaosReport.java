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

  /**
   * A cold start of a cluster without local data from object storage, in ms from the first node
   * process started: to every node Up (each made its data set and model first) with the client
   * member joined, to every range restored (the coordinator's status), and to every example looked
   * up equal to the reference; the persisted ranges computed again (must be 0).
   */
  record ColdStart(
      int episode,
      int ranges,
      long examples,
      long upMs,
      long restoredMs,
      long servedMs,
      long recomputed) {}

  final List<Fault> faults = new ArrayList<>();
  final List<ColdStart> coldStarts = new ArrayList<>();
  final Map<String, String> invariants = new LinkedHashMap<>();

  /** What was seen that no invariant decides (e.g. what nodes answer while the journal is down). */
  final Map<String, String> observations = new LinkedHashMap<>();

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

  /**
   * Per kind of fault of the cloud episodes: ranges that had been persisted when it struck and were
   * computed again after it (each must be 0).
   */
  final Map<String, Long> recomputedPersisted = new TreeMap<>();

  /** Faults left out of a run, each with the reason. */
  final Map<String, String> skippedFaults = new TreeMap<>();

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

  /** Adds the persisted ranges a fault of {@code kind} had computed again. */
  synchronized void recomputed(String kind, long ranges) {
    recomputedPersisted.merge(kind, ranges, Long::sum);
  }

  /** Records what was seen. */
  synchronized void observe(String what, String seen) {
    observations.put(what, seen);
  }

  /** Records that faults of {@code kind} were left out, and why. */
  synchronized void skip(String kind, String reason) {
    skippedFaults.put(kind, reason);
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
        && journalWithoutSegment == 0
        && recomputedPersisted.values().stream().allMatch(r -> r == 0);
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
                journalWithoutSegment)
            + (recomputedPersisted.isEmpty()
                ? ""
                : " recomputed_persisted_ranges=" + recomputedPersisted)
            + (skippedFaults.isEmpty() ? "" : " skipped_faults=" + skippedFaults.keySet());
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
    for (ColdStart c : coldStarts) {
      out.printf(
          "ep%d cold start without local data: nodes up in %d ms, %d ranges restored in %d ms,"
              + " all %d examples served in %d ms, %d persisted ranges recomputed%n",
          c.episode(),
          c.upMs(),
          c.ranges(),
          c.restoredMs(),
          c.examples(),
          c.servedMs(),
          c.recomputed());
    }
    if (!recomputedPersisted.isEmpty()) {
      out.println("persisted ranges recomputed, by fault: " + recomputedPersisted);
    }
    skippedFaults.forEach((k, why) -> out.printf("skipped %s: %s%n", k, why));
    invariants.forEach((k, v) -> out.printf("  %-40s %s%n", k, v));
    observations.forEach((k, v) -> out.printf("  seen: %s: %s%n", k, v));
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
    m.put("recomputed_persisted_ranges", recomputedPersisted);
    m.put("skipped_faults", skippedFaults);
    m.put("cold_starts", coldStarts);
    m.put("seconds", seconds);
    m.put("invariants", invariants);
    m.put("observations", observations);
    m.put("fault_log", faults);
    m.put("summary", summary());
    Files.createDirectories(file.toAbsolutePath().getParent());
    new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValue(file.toFile(), m);
  }
}
