package org.tensorcache.store.spec;

import java.util.List;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldSpec;

/**
 * How the per-token fields of a cache are kept: {@link Plain}, their values as they are, or {@link
 * TopK}, a teacher's top-K output coded compactly (or exactly) by the {@code topk} codec. A cache
 * of fixed-shape fields has {@link #PLAIN}, which then means nothing.
 */
public sealed interface TokenCoding permits TokenCoding.Plain, TokenCoding.TopK {
  /** Values as they are: the default, and the only coding of a cache of fixed-shape fields. */
  Plain PLAIN = new Plain();

  /** The name of a teacher cache's ids field, {@code [tokens, K]} int32. */
  String IDS = "teacher_ids";

  /** The name of a teacher cache's log-probs field, {@code [tokens, K]} float32. */
  String LOGPS = "teacher_logps";

  /** The name of a teacher cache's tail field, {@code [tokens]} float32. */
  String TAIL = "teacher_tail_logp";

  /** Checks that {@code fields}, all per-token, can be coded this way. */
  void check(String cacheName, List<FieldSpec> fields);

  /** Per-token values kept as they are, little-endian, field after field. */
  record Plain() implements TokenCoding {
    @Override
    public void check(String cacheName, List<FieldSpec> fields) {}

    @Override
    public String toString() {
      return "plain";
    }
  }

  /**
   * A teacher's top-K output per token: {@link #fields} in that order, the log-probs in the codec's
   * compact form, or as float32 where {@code exact}.
   *
   * @param vocab the teacher's vocabulary size, at least 2
   * @param k the ids per token, {@code 1..vocab}
   * @param exact whether the log-probs are kept as float32
   */
  record TopK(int vocab, int k, boolean exact) implements TokenCoding {
    /** Checks the sizes, naming the bad value. */
    public TopK {
      if (vocab < 2) {
        throw new IllegalArgumentException("vocabulary size " + vocab + ", expected at least 2");
      }
      if (k < 1 || k > vocab) {
        throw new IllegalArgumentException(
            "top-k " + k + ", expected 1.." + vocab + " (the vocabulary size)");
      }
    }

    /** The three fields of a teacher cache of top-{@code k}. */
    public List<FieldSpec> fields() {
      return List.of(
          FieldSpec.perToken(IDS, DType.I32, k),
          FieldSpec.perToken(LOGPS, DType.F32, k),
          FieldSpec.perToken(TAIL, DType.F32));
    }

    @Override
    public void check(String cacheName, List<FieldSpec> fields) {
      if (!fields.equals(fields())) {
        throw new IllegalArgumentException(
            "cache '"
                + cacheName
                + "' has fields "
                + fields
                + ", expected "
                + fields()
                + " for a teacher's top-"
                + k);
      }
    }

    @Override
    public String toString() {
      return "top-" + k + " of " + vocab + (exact ? ", exact" : ", compact");
    }
  }
}
