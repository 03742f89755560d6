package org.tensorcache.model.runner;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.tensorcache.fields.FieldSpec;

class RunnerOutputTest {
  static final List<FieldSpec> FIELDS = List.of(FieldSpec.scalar("a"), FieldSpec.vector("v", 3));

  @Test
  void nanNamesTheExampleIndex() {
    float[][][] values = {{{1f}, {Float.NaN}}, {{1, 2, 3}, {4, 5, 6}}};
    var e =
        assertThrows(
            InvalidRunnerOutputException.class,
            () -> RunnerOutput.validated("r", FIELDS, new long[] {40, 41}, values));
    assertEquals(41, e.exampleIndex());
    assertEquals("runner 'r' returned NaN for field 'a' of example 41 (element 0)", e.getMessage());
  }

  @Test
  void wrongShapeNamesTheExampleIndex() {
    float[][][] values = {{{1f}, {2f}}, {{1, 2, 3}, {4, 5}}};
    var e =
        assertThrows(
            InvalidRunnerOutputException.class,
            () -> RunnerOutput.validated("r", FIELDS, new long[] {40, 41}, values));
    assertEquals(41, e.exampleIndex());
    assertEquals(
        "runner 'r' returned 2 values for field 'v' of example 41, expected v: F32 [3]",
        e.getMessage());
  }

  @Test
  void infinityIsAValue() {
    float[][][] values = {{{Float.NEGATIVE_INFINITY}}, {{1, 2, Float.POSITIVE_INFINITY}}};
    RunnerOutput out = RunnerOutput.validated("r", FIELDS, new long[] {3}, values);
    assertEquals(Float.NEGATIVE_INFINITY, out.value("a", 0)[0]);
  }
}
