package org.tensorcache.model.spec;

/**
 * The element type of a cached field. Values are merged with MAX, so only ordered floating types
 * make sense; float32 is what reference log-probs and features need today.
 */
public enum DType {
  /** IEEE 754 binary32, stored little-endian; safetensors name {@code F32}. */
  F32("F32", 4);

  private final String safetensorsName;
  private final int bytes;

  DType(String safetensorsName, int bytes) {
    this.safetensorsName = safetensorsName;
    this.bytes = bytes;
  }

  /** The dtype string used in safetensors headers. */
  public String safetensorsName() {
    return safetensorsName;
  }

  /** Bytes per element. */
  public int bytes() {
    return bytes;
  }

  /** Parses a safetensors dtype string, naming the accepted ones when it is not one of them. */
  public static DType fromSafetensors(String name) {
    for (DType t : values()) {
      if (t.safetensorsName.equals(name)) {
        return t;
      }
    }
    throw new IllegalArgumentException("unsupported dtype '" + name + "', expected one of [F32]");
  }
}
