package org.tensorcache.fields;

/**
 * The element type of a cached field. Values are merged with MAX: floating types as the floats they
 * encode, integer types as integers. In memory a field of {@code F32} is a {@code float[]}, {@code
 * F16} and {@code BF16} a {@code short[]} of their 16-bit patterns, {@code I32} an {@code int[]}
 * and {@code I64} a {@code long[]}; on disk and on the wire every type is little-endian.
 */
public enum DType {
  /** IEEE 754 binary32. */
  F32("F32", 4, 1),
  /** IEEE 754 binary16, kept as its bit pattern. */
  F16("F16", 2, 2),
  /** bfloat16 (the high half of a binary32), kept as its bit pattern. */
  BF16("BF16", 2, 3),
  /** Signed 32-bit integer. */
  I32("I32", 4, 4),
  /** Signed 64-bit integer. */
  I64("I64", 8, 5);

  private final String safetensorsName;
  private final int bytes;
  private final int code;

  DType(String safetensorsName, int bytes, int code) {
    this.safetensorsName = safetensorsName;
    this.bytes = bytes;
    this.code = code;
  }

  /** The dtype string used in safetensors headers and on the lookup port. */
  public String safetensorsName() {
    return safetensorsName;
  }

  /** Bytes per element. */
  public int bytes() {
    return bytes;
  }

  /** The one-byte code of the dtype in a version-3 values reply of the lookup port. */
  public int code() {
    return code;
  }

  /** Whether values are floating point (MAX compares the floats they encode). */
  public boolean isFloating() {
    return this == F32 || this == F16 || this == BF16;
  }

  /** A new array of {@code n} elements of this dtype's Java element type (zeros). */
  public Object newArray(int n) {
    return switch (this) {
      case F32 -> new float[n];
      case F16, BF16 -> new short[n];
      case I32 -> new int[n];
      case I64 -> new long[n];
    };
  }

  /** The dtype of a code from a values reply, or null when none has it. */
  public static DType ofCode(int code) {
    for (DType t : values()) {
      if (t.code == code) {
        return t;
      }
    }
    return null;
  }

  /** Parses a safetensors dtype string, naming the accepted ones when it is not one of them. */
  public static DType fromSafetensors(String name) {
    for (DType t : values()) {
      if (t.safetensorsName.equals(name)) {
        return t;
      }
    }
    throw new IllegalArgumentException(
        "unsupported dtype '" + name + "', expected one of [F32, F16, BF16, I32, I64]");
  }

  /** Parses a dtype as a user writes it: a safetensors name in any case, or float32 and alike. */
  public static DType parse(String name) {
    String n = name == null ? "" : name.trim().toUpperCase(java.util.Locale.ROOT);
    return switch (n) {
      case "FLOAT32", "FP32" -> F32;
      case "FLOAT16", "FP16", "HALF" -> F16;
      case "BFLOAT16" -> BF16;
      case "INT32" -> I32;
      case "INT64" -> I64;
      default -> fromSafetensors(n);
    };
  }
}
