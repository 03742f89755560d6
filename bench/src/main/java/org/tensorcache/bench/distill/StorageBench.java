package org.tensorcache.bench.distill;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.report.Table;
import org.tensorcache.store.topk.TopKCodec;

/**
 * Bytes per token of a teacher's top-K output as a cache keeps it, compact and exact, next to
 * DistillKit's published sizes and to plain int32 ids with float32 log-probs, and what the compact
 * form loses: the KL per token of the decoded top-K-plus-tail distribution from the exact one, and
 * the largest log-prob error; with the codec's speed. Over Qwen's vocabulary of 151,936 ids, in
 * rows of 256 tokens.
 */
public final class StorageBench {
  static final int VOCAB = 151_936;
  private static final int ROW = 256;

  /** DistillKit's published bytes per token (its compressed Parquet), where it gives one. */
  private static final Map<Integer, Double> DISTILLKIT = Map.of(50, 114.0, 128, 300.0);

  private StorageBench() {}

  public static List<Map<String, Object>> run(RunSize size) {
    int tokens = size.pick(20_480, 4_096, 256);
    Table table =
        new Table("teacher top-K per token, vocabulary " + VOCAB + ", " + tokens + " tokens")
            .col("k", "%4d")
            .col("compact_bytes_per_token", "compact B/tok", "%14.1f")
            .col("exact_bytes_per_token", "exact B/tok", "%12.1f")
            .col("int32_float32_bytes_per_token", "i32+f32 B/tok", "%14.1f")
            .col("distillkit_bytes_per_token", "DistillKit B/tok", "%17.1f")
            .col("kl_mean_nats", "KL mean", "%10.2e")
            .col("kl_max_nats", "KL max", "%10.2e")
            .col("max_abs_logp_error_p_over_1pct", "max |dlogp| p>1%", "%17.4f")
            .col("max_abs_logp_error_any", "max |dlogp|", "%12.3f")
            .col("decode_ns_per_entry", "decode ns", "%10.1f")
            .col("encode_ns_per_entry", "encode ns", "%10.1f");
    for (int k : new int[] {16, 50, 64, 128}) {
      TeacherSample sample = TeacherSample.draw(k, VOCAB, k, tokens);
      TopKCodec compact = TopKCodec.compact(VOCAB, k);
      byte[][] rows = encode(compact, sample);
      long compactBytes = Arrays.stream(rows).mapToLong(r -> r.length).sum();
      long exactBytes =
          Arrays.stream(encode(TopKCodec.exact(VOCAB, k), sample)).mapToLong(r -> r.length).sum();
      Errors errors = Errors.of(sample, decode(compact, rows, sample));
      long entries = (long) tokens * k;
      table.row(
          k,
          (double) compactBytes / tokens,
          (double) exactBytes / tokens,
          k * 8.0 + 4,
          DISTILLKIT.get(k),
          errors.klMean(),
          errors.klMax(),
          errors.maxLargeError(),
          errors.maxError(),
          best(() -> decode(compact, rows, sample)) / entries,
          best(() -> encode(compact, sample)) / entries);
    }
    return table.print();
  }

  private static byte[][] encode(TopKCodec codec, TeacherSample s) {
    int k = s.k();
    byte[][] rows = new byte[(s.tokens() + ROW - 1) / ROW][];
    for (int r = 0; r < rows.length; r++) {
      int from = r * ROW;
      int n = Math.min(ROW, s.tokens() - from);
      rows[r] =
          codec.encode(
              n,
              Arrays.copyOfRange(s.ids(), from * k, (from + n) * k),
              Arrays.copyOfRange(s.logps(), from * k, (from + n) * k),
              Arrays.copyOfRange(s.tails(), from, from + n));
    }
    return rows;
  }

  private static TeacherSample decode(TopKCodec codec, byte[][] rows, TeacherSample s) {
    int[] ids = new int[s.ids().length];
    float[] logps = new float[ids.length];
    float[] tails = new float[s.tokens()];
    for (int r = 0; r < rows.length; r++) {
      int n = Math.min(ROW, s.tokens() - r * ROW);
      codec.decode(rows[r], 0, rows[r].length, n, ids, logps, tails, r * ROW);
    }
    return new TeacherSample(s.vocab(), s.k(), s.tokens(), ids, logps, tails);
  }

  /** The fastest of a few runs of {@code work}, in nanoseconds. */
  private static double best(Runnable work) {
    long best = Long.MAX_VALUE;
    for (int i = 0; i < 5; i++) {
      long t0 = System.nanoTime();
      work.run();
      best = Math.min(best, System.nanoTime() - t0);
    }
    return best;
  }
}
