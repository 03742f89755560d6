package org.tensorcache.store.rows;

import java.util.List;
import java.util.SplittableRandom;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.TokenCoding;
import org.tensorcache.store.topk.TeacherTokens;

/** Per-token specs and seeded rows for the tests of rows and their segments. */
public final class RowFixtures {
  private RowFixtures() {}

  /** 100 examples in ranges of 40: a float vector of 3 and an int64 per token. */
  public static CacheSpec plainSpec() {
    return new CacheSpec(
        "hidden",
        100,
        List.of(FieldSpec.perToken("states", DType.F32, 3), FieldSpec.perToken("ids", DType.I64)),
        40);
  }

  /** 50 examples in ranges of 16 of a teacher's top-8 of 1000 ids, compact or exact. */
  public static CacheSpec teacherSpec(boolean exact) {
    return CacheSpec.teacher("teacher", 50, 16, new TokenCoding.TopK(1000, 8, exact));
  }

  /** One example's values: 1 to 40 tokens, drawn from {@code seed}. */
  public static Object[] values(CacheSpec spec, int tokens, long seed) {
    if (spec.tokenCoding() instanceof TokenCoding.TopK t) {
      TeacherTokens teacher = TeacherTokens.sample(seed, tokens, t.vocab(), t.k());
      return new Object[] {teacher.ids(), teacher.logps(), teacher.tails()};
    }
    SplittableRandom random = new SplittableRandom(seed);
    float[] states = new float[tokens * 3];
    for (int i = 0; i < states.length; i++) {
      states[i] = (float) random.nextGaussian();
    }
    long[] ids = random.longs(tokens).toArray();
    return new Object[] {states, ids};
  }

  /** Range {@code range} with about {@code percentPresent}% of examples present. */
  public static RowBlock rows(CacheSpec spec, int range, long seed, int percentPresent) {
    RowCodec codec = RowCodec.of(spec);
    SplittableRandom random = new SplittableRandom(seed);
    RowBlock rows = RowBlock.empty(spec, range);
    for (int i = 0; i < rows.length(); i++) {
      if (random.nextInt(100) < percentPresent) {
        int tokens = 1 + random.nextInt(40);
        long index = rows.start() + i;
        rows.put(index, tokens, codec.encode(tokens, values(spec, tokens, seed * 1000 + index)));
      }
    }
    return rows;
  }
}
