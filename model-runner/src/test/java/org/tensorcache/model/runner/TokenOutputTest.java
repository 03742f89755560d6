package org.tensorcache.model.runner;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldSpec;

class TokenOutputTest {
  static final List<FieldSpec> FIELDS =
      List.of(FieldSpec.perToken("ids", DType.I32, 2), FieldSpec.perToken("tail", DType.F32));

  @Test
  void keepsEachExamplesTokensAndValues() {
    Object[][] values = {
      {new int[] {1, 2}, new int[] {3, 4, 5, 6}},
      {new float[] {-1f}, new float[] {-2f, Float.NEGATIVE_INFINITY}}
    };
    TokenOutput out =
        TokenOutput.validated("r", FIELDS, new long[] {7, 9}, new int[] {1, 2}, values);
    assertEquals(2, out.size());
    assertEquals(9, out.index(1));
    assertEquals(2, out.tokens(1));
    assertArrayEquals(new int[] {3, 4, 5, 6}, out.ints("ids", 1));
    assertArrayEquals(new float[] {-2f, Float.NEGATIVE_INFINITY}, out.floats("tail", 1));
  }

  @Test
  void aLengthThatIsNotTokensTimesWidthNamesTheExample() {
    Object[][] values = {
      {new int[] {1, 2}, new int[] {3, 4, 5}}, {new float[] {-1f}, new float[] {-2f, -3f}}
    };
    var e =
        assertThrows(
            InvalidRunnerOutputException.class,
            () -> TokenOutput.validated("r", FIELDS, new long[] {7, 9}, new int[] {1, 2}, values));
    assertEquals(9, e.exampleIndex());
    assertEquals(
        "runner 'r' returned int[] of 3 for field 'ids' of example 9, expected int[] of 4 values",
        e.getMessage());
  }

  @Test
  void theWrongArrayTypeNamesTheField() {
    Object[][] values = {{new float[] {1, 2}}, {new float[] {-1f}}};
    var e =
        assertThrows(
            InvalidRunnerOutputException.class,
            () -> TokenOutput.validated("r", FIELDS, new long[] {4}, new int[] {1}, values));
    assertEquals(
        "runner 'r' returned float[] of 2 for field 'ids' of example 4, expected int[] of 2 values",
        e.getMessage());
  }

  @Test
  void nanAndNoTokensNameTheExample() {
    Object[][] nan = {{new int[] {1, 2}}, {new float[] {Float.NaN}}};
    var e =
        assertThrows(
            InvalidRunnerOutputException.class,
            () -> TokenOutput.validated("r", FIELDS, new long[] {5}, new int[] {1}, nan));
    assertEquals(
        "runner 'r' returned NaN for field 'tail' of example 5 (element 0)", e.getMessage());
    Object[][] none = {{new int[0]}, {new float[0]}};
    e =
        assertThrows(
            InvalidRunnerOutputException.class,
            () -> TokenOutput.validated("r", FIELDS, new long[] {6}, new int[] {0}, none));
    assertEquals("runner 'r' returned 0 tokens for example 6, expected at least 1", e.getMessage());
  }

  @Test
  void aFixedShapeFieldIsRefused() {
    Object[][] values = {{new float[] {1}}};
    var e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                TokenOutput.validated(
                    "r", List.of(FieldSpec.scalar("a")), new long[] {1}, new int[] {1}, values));
    assertEquals(
        "field a: F32 [] of runner 'r' is not a per-token F32 or I32 field", e.getMessage());
  }
}
