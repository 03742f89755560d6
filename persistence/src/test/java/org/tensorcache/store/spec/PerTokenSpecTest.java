package org.tensorcache.store.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.Fixtures;

class PerTokenSpecTest {
  private static final TokenCoding.TopK TOP8 = new TokenCoding.TopK(1000, 8, false);

  private static Fingerprint fp(CacheSpec spec) {
    return Fingerprint.of(
        new FingerprintInputs(
            "runner", "1", "w", "d", Map.of("max_len", "128", "dtype", "fp32"), spec));
  }

  @Test
  void aTeacherCacheHasTheThreeFieldsOfItsTopK() {
    CacheSpec spec = CacheSpec.teacher("teacher", 10, 4, TOP8);
    assertTrue(spec.perToken());
    assertEquals(
        List.of(
            "teacher_ids: I32 [tokens, 8]",
            "teacher_logps: F32 [tokens, 8]",
            "teacher_tail_logp: F32 [tokens]"),
        spec.fields().stream().map(FieldSpec::toString).toList());
    assertFalse(Fixtures.spec().perToken());
  }

  @Test
  void fieldsOfTwoKindsOrOfTheWrongTopKAreRefusedNamingThem() {
    var mixed =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                new CacheSpec(
                    "c",
                    10,
                    List.of(FieldSpec.scalar("logp"), FieldSpec.perToken("ids", DType.I32, 4)),
                    5));
    assertTrue(
        mixed.getMessage().contains("mixes per-token field 'ids' with fixed-shape field 'logp'"),
        mixed.getMessage());
    var wrongK =
        assertThrows(
            IllegalArgumentException.class,
            () -> new CacheSpec("t", 10, new TokenCoding.TopK(1000, 4, false).fields(), 5, TOP8));
    assertTrue(wrongK.getMessage().contains("for a teacher's top-8"), wrongK.getMessage());
    var codedFixed =
        assertThrows(
            IllegalArgumentException.class,
            () -> new CacheSpec("f", 10, List.of(FieldSpec.scalar("logp")), 5, TOP8));
    assertTrue(codedFixed.getMessage().contains("no per-token fields"), codedFixed.getMessage());
    var topTooLarge =
        assertThrows(IllegalArgumentException.class, () -> new TokenCoding.TopK(100, 101, false));
    assertTrue(topTooLarge.getMessage().contains("top-k 101, expected 1..100"));
    assertThrows(IllegalArgumentException.class, () -> new TokenCoding.TopK(100, 0, false));
  }

  @Test
  void fixedShapeCachesKeepTheFingerprintTheyHadBeforePerTokenFields() {
    // computed from the encoding of tensorcache-fingerprint/1 before per-token fields existed
    assertEquals(
        "ff389cd29b8bbfff521253dd6d92183ef997af7f2012d6ce4f8fc106034f533d",
        fp(Fixtures.spec()).hex());
  }

  @Test
  void perTokenFieldsTheirCodingAndTheirExactnessEachChangeTheFingerprint() {
    CacheSpec fixed =
        new CacheSpec("c", 10, List.of(new FieldSpec("ids", DType.I32, new int[] {8})), 5);
    CacheSpec plain = new CacheSpec("c", 10, List.of(FieldSpec.perToken("ids", DType.I32, 8)), 5);
    assertNotEquals(fp(fixed), fp(plain));
    CacheSpec compact = CacheSpec.teacher("c", 10, 5, TOP8);
    CacheSpec exact = CacheSpec.teacher("c", 10, 5, new TokenCoding.TopK(1000, 8, true));
    CacheSpec wider = CacheSpec.teacher("c", 10, 5, new TokenCoding.TopK(1001, 8, false));
    CacheSpec plainTrio = new CacheSpec("c", 10, TOP8.fields(), 5);
    assertEquals(
        4, List.of(fp(compact), fp(exact), fp(wider), fp(plainTrio)).stream().distinct().count());
  }
}
