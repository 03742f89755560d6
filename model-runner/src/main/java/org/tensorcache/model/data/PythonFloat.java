package org.tensorcache.model.data;

import java.math.BigDecimal;
import java.math.MathContext;
import java.math.RoundingMode;

/**
 * Spells a double as Python's {@code repr()} does, so a digest over rows with floating-point values
 * is the same in Java and in python/tensorcache/digests.py. Python writes the shortest decimal that
 * reads back as the same double (the nearest such one when there are several): fixed notation with
 * at least one digit after the point while the decimal exponent is in [-4, 16), otherwise {@code
 * 1.5e-05}, {@code 1e+16}. Java 17's {@link Double#toString} is neither always shortest nor spelled
 * that way.
 */
final class PythonFloat {
  private PythonFloat() {}

  static String repr(double value) {
    if (Double.isNaN(value)) {
      return "nan";
    }
    if (Double.isInfinite(value)) {
      return value > 0 ? "inf" : "-inf";
    }
    if (value == 0) {
      return (1 / value < 0) ? "-0.0" : "0.0";
    }
    BigDecimal shortest = shortest(value).stripTrailingZeros();
    String sign = shortest.signum() < 0 ? "-" : "";
    String digits = shortest.unscaledValue().abs().toString();
    // value = 0.<digits> x 10^point
    int point = digits.length() - shortest.scale();
    if (point > -4 && point <= 16) {
      return sign + fixed(digits, point);
    }
    int exponent = point - 1;
    String mantissa = digits.length() == 1 ? digits : digits.charAt(0) + "." + digits.substring(1);
    String e = Integer.toString(Math.abs(exponent));
    return sign + mantissa + "e" + (exponent < 0 ? "-" : "+") + (e.length() < 2 ? "0" + e : e);
  }

  private static String fixed(String digits, int point) {
    if (point <= 0) {
      return "0." + "0".repeat(-point) + digits;
    }
    if (point < digits.length()) {
      return digits.substring(0, point) + "." + digits.substring(point);
    }
    return digits + "0".repeat(point - digits.length()) + ".0";
  }

  /**
   * The decimal of fewest significant digits that reads back as {@code value}; of those, the
   * nearest. Rounding down and up are tried beside to nearest: at a power of two the doubles below
   * lie closer than those above, so the nearest short decimal can miss where a farther one reads
   * back.
   */
  private static BigDecimal shortest(double value) {
    BigDecimal exact = new BigDecimal(value);
    for (int precision = 1; precision <= 17; precision++) {
      BigDecimal best = null;
      for (RoundingMode mode :
          new RoundingMode[] {RoundingMode.HALF_EVEN, RoundingMode.FLOOR, RoundingMode.CEILING}) {
        BigDecimal candidate = exact.round(new MathContext(precision, mode));
        if (candidate.doubleValue() == value
            && (best == null
                || candidate.subtract(exact).abs().compareTo(best.subtract(exact).abs()) < 0)) {
          best = candidate;
        }
      }
      if (best != null) {
        return best;
      }
    }
    return exact; // not reached: 17 significant digits always read back
  }
}
