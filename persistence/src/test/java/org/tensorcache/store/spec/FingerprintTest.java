package org.tensorcache.store.spec;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.Fixtures;

class FingerprintTest {
  private static final CacheSpec SPEC = Fixtures.spec();
  private static final Map<String, String> PARAMS = Map.of("max_len", "128", "dtype", "fp32");

  private static Fingerprint fp(
      String runner,
      String version,
      String weights,
      String data,
      Map<String, String> p,
      CacheSpec s) {
    return Fingerprint.of(new FingerprintInputs(runner, version, weights, data, p, s));
  }

  private static Fingerprint base() {
    return fp("runner", "1", "w", "d", PARAMS, SPEC);
  }

  @Test
  void sameInputsGiveTheSameFingerprint() {
    assertEquals(base(), base());
    assertTrue(base().hex().matches("[0-9a-f]{64}"));
    assertEquals("dpo-ref-" + base().hex().substring(0, 16), base().cacheId());
  }

  @Test
  void parameterOrderDoesNotMatter() {
    Map<String, String> a = new LinkedHashMap<>();
    a.put("a", "1");
    a.put("b", "2");
    Map<String, String> b = new LinkedHashMap<>();
    b.put("b", "2");
    b.put("a", "1");
    assertEquals(fp("r", "1", "w", "d", a, SPEC), fp("r", "1", "w", "d", b, SPEC));
  }

  @Test
  void changingAnySingleInputChangesTheFingerprint() {
    List<FieldSpec> fields = SPEC.fields();
    List<Fingerprint> variants =
        List.of(
            base(),
            fp("runner2", "1", "w", "d", PARAMS, SPEC),
            fp("runner", "2", "w", "d", PARAMS, SPEC),
            fp("runner", "1", "w2", "d", PARAMS, SPEC),
            fp("runner", "1", "w", "d2", PARAMS, SPEC),
            fp("runner", "1", "w", "d", Map.of("max_len", "128"), SPEC),
            fp("runner", "1", "w", "d", Map.of("max_len", "129", "dtype", "fp32"), SPEC),
            fp("runner", "1", "w", "d", Map.of("max_len2", "128", "dtype", "fp32"), SPEC),
            fp("runner", "1", "w", "d", PARAMS, new CacheSpec("dpo-ref", 1001, fields, 300)),
            fp("runner", "1", "w", "d", PARAMS, new CacheSpec("dpo-ref", 1000, fields, 301)),
            fp(
                "runner",
                "1",
                "w",
                "d",
                PARAMS,
                new CacheSpec("dpo-ref", 1000, fields.subList(0, 2), 300)),
            fp(
                "runner",
                "1",
                "w",
                "d",
                PARAMS,
                new CacheSpec(
                    "dpo-ref",
                    1000,
                    List.of(fields.get(0), fields.get(1), FieldSpec.vector("features", 4)),
                    300)),
            fp(
                "runner",
                "1",
                "w",
                "d",
                PARAMS,
                new CacheSpec(
                    "dpo-ref",
                    1000,
                    List.of(
                        fields.get(0),
                        fields.get(1),
                        new FieldSpec("features", DType.F32, new int[] {3, 1})),
                    300)),
            fp(
                "runner",
                "1",
                "w",
                "d",
                PARAMS,
                new CacheSpec(
                    "dpo-ref",
                    1000,
                    List.of(fields.get(0), FieldSpec.scalar("rejected_logq"), fields.get(2)),
                    300)));
    Set<String> hexes = new HashSet<>();
    variants.forEach(v -> hexes.add(v.hex()));
    assertEquals(variants.size(), hexes.size());
    Fingerprint renamed =
        fp("runner", "1", "w", "d", PARAMS, new CacheSpec("dpo-ref2", 1000, fields, 300));
    assertNotEquals(base().hex(), renamed.hex());
    assertTrue(renamed.cacheId().startsWith("dpo-ref2-"));
  }

  @Test
  void boundariesBetweenInputsAreUnambiguous() {
    assertNotEquals(fp("ab", "c", "w", "d", PARAMS, SPEC), fp("a", "bc", "w", "d", PARAMS, SPEC));
    assertNotEquals(
        fp("r", "1", "w", "d", Map.of("ab", "c"), SPEC),
        fp("r", "1", "w", "d", Map.of("a", "bc"), SPEC));
  }

  @Test
  void invalidValuesAreRejected() {
    assertThrows(IllegalArgumentException.class, () -> fp("", "1", "w", "d", PARAMS, SPEC));
    assertThrows(IllegalArgumentException.class, () -> new Fingerprint("c", "abc"));
    assertThrows(IllegalArgumentException.class, () -> new Fingerprint("c", "A".repeat(64)));
  }
}
