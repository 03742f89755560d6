package org.tensorcache.cli;

import org.tensorcache.launch.Job;

/** The figures of one demo run and its closing line. */
final class DemoReport {
  final long examples;
  long computed;
  double fillSeconds;
  long exportBytes;
  double[] lookups;
  float lossFirst;
  float lossLast;
  long resumedAt;
  int mismatches;

  DemoReport(long examples) {
    this.examples = examples;
  }

  /** Prints the summary and the closing line; returns the exit code. */
  int print(Job job) {
    double rate = computed == 0 ? 0 : computed / fillSeconds;
    System.out.println("summary");
    System.out.printf("  examples     %d (%d computed this run)%n", examples, computed);
    System.out.printf("  fields       %s%n", job.spec().fields());
    System.out.printf("  fill         %.2f s, %.0f examples/s%n", fillSeconds, rate);
    System.out.printf(
        "  export       %s (%d bytes)%n",
        job.cacheDir().resolve("export.safetensors"), exportBytes);
    System.out.printf("  lookup B=32  p50 %.1f us, p99 %.1f us%n", lookups[0], lookups[1]);
    System.out.printf("  dpo loss     %.4f -> %.4f%n", lossFirst, lossLast);
    System.out.printf("  fingerprint  %s%n", job.fingerprint().hex());
    if (mismatches != 0) {
      System.out.printf(
          "demo: FAILED %d served steps differ from an uninterrupted run after the resume at step %d%n",
          mismatches, resumedAt);
      return 1;
    }
    System.out.printf(
        "demo: OK examples=%d fill_examples_per_s=%.0f lookup_p50_us=%.1f lookup_p99_us=%.1f"
            + " dpo_loss_first=%.4f dpo_loss_last=%.4f resumed_at_step=%d replay_mismatches=0%n",
        examples, rate, lookups[0], lookups[1], lossFirst, lossLast, resumedAt);
    return 0;
  }
}
