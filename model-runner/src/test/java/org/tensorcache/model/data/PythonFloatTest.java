package org.tensorcache.model.data;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** Doubles spelled as Python's repr() spells them: the digest of rows with floats depends on it. */
class PythonFloatTest {
  /** Python 3's repr() of each double, given exactly by its hex form (float.hex()). */
  private static final String[][] PYTHON =
      new String[][] {
        {"0x1.0p-1", "0.5"},
        {"0x1.0p+0", "1.0"},
        {"-0x0.0p+0", "-0.0"},
        {"0x1.999999999999ap-4", "0.1"},
        {"0x1.5555555555555p-2", "0.3333333333333333"},
        {"0x1.9p+6", "100.0"},
        {"0x1.c6bf526340000p+49", "1000000000000000.0"},
        {"0x1.1c37937e08000p+53", "1e+16"},
        {"0x1.aa535d3d0c000p+53", "1.5e+16"},
        {"0x1.b69b4ba630f35p+56", "1.2345678901234568e+17"},
        {"0x1.a36e2eb1c432dp-14", "0.0001"},
        {"0x1.4f8b588e368f1p-17", "1e-05"},
        {"0x1.f75104d551d69p-17", "1.5e-05"},
        {"-0x1.0c6f7a0b5ed8dp-22", "-2.5e-07"},
        {"0x0.0000000000001p-1022", "5e-324"},
        {"0x0.0000000000003p-1022", "1.5e-323"},
        {"0x1.0p-1022", "2.2250738585072014e-308"},
        {"0x1.fffffffffffffp+1023", "1.7976931348623157e+308"},
        {"0x1.0p+53", "9007199254740992.0"},
        {"0x1.3333333333334p-2", "0.30000000000000004"},
        {"0x1.0f0cf064dd592p+73", "1e+22"},
        {"0x1.52d02c7e14af6p+76", "1e+23"},
        {"0x1.0p+60", "1.152921504606847e+18"},
        {"0x1.0p-20", "9.5367431640625e-07"},
        {"0x1.34a456d5cfaadp+10", "1234.5678"},
      };

  @Test
  void spellsDoublesAsPythonDoes() {
    for (String[] c : PYTHON) {
      assertEquals(c[1], PythonFloat.repr(Double.parseDouble(c[0])), c[0]);
    }
    assertEquals("inf", PythonFloat.repr(Double.POSITIVE_INFINITY));
    assertEquals("nan", PythonFloat.repr(Double.NaN));
  }

  /** Seeded random doubles of every magnitude, and short decimals, against python3 itself. */
  @Test
  void agreesWithPythonOnRandomDoubles() throws Exception {
    Random random = new Random(20261126L);
    List<Double> values = new ArrayList<>();
    while (values.size() < 20_000) {
      double d = Double.longBitsToDouble(random.nextLong());
      if (Double.isFinite(d)) {
        values.add(d);
      }
    }
    for (int i = 0; i < 20_000; i++) {
      values.add((random.nextInt(2_000_001) - 1_000_000) * Math.pow(10, random.nextInt(40) - 20));
    }
    StringBuilder hex = new StringBuilder();
    for (double d : values) {
      hex.append(Double.toHexString(d)).append('\n');
    }
    String[] python = python(hex.toString()).split("\n");
    assertEquals(values.size(), python.length);
    for (int i = 0; i < python.length; i++) {
      assertEquals(python[i], PythonFloat.repr(values.get(i)), Double.toHexString(values.get(i)));
    }
  }

  private static String python(String hexLines) throws Exception {
    String script =
        "import sys\n"
            + "print('\\n'.join(repr(float.fromhex(l)) for l in sys.stdin.read().split()))\n";
    Process p;
    try {
      p = new ProcessBuilder("python3", "-c", script).start();
    } catch (IOException e) {
      if ("true".equals(System.getenv("CI"))) {
        fail("python3 is needed: " + e.getMessage());
      }
      Assumptions.assumeTrue(false, "python3 cannot be started: " + e.getMessage());
      return null;
    }
    p.getOutputStream().write(hexLines.getBytes(StandardCharsets.US_ASCII));
    p.getOutputStream().close();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "python3 did not finish");
    assertEquals(0, p.exitValue(), new String(p.getErrorStream().readAllBytes()));
    return out;
  }
}
