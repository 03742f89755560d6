package org.tensorcache.store.segment;

import java.util.Arrays;
import java.util.List;
import org.tensorcache.fields.DType;

/**
 * One tensor entry of a safetensors header, as this project writes it.
 *
 * @param name tensor name
 * @param dtype safetensors dtype: a field's {@link DType} or {@code U8}
 * @param shape dimensions
 */
public record TensorInfo(String name, String dtype, long[] shape) {
  /** Validates the dtype and takes a copy of the shape. */
  public TensorInfo {
    elementBytes(dtype);
    shape = shape.clone();
  }

  /** Bytes of the tensor's data. */
  public long byteLength() {
    long elements = 1;
    for (long d : shape) {
      elements = Math.multiplyExact(elements, d);
    }
    return Math.multiplyExact(elements, elementBytes(dtype));
  }

  /** Total bytes of the data region of {@code tensors}, stored one after another. */
  public static long dataLength(List<TensorInfo> tensors) {
    long total = 0;
    for (TensorInfo t : tensors) {
      total = Math.addExact(total, t.byteLength());
    }
    return total;
  }

  @Override
  public long[] shape() {
    return shape.clone();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof TensorInfo t
        && t.name.equals(name)
        && t.dtype.equals(dtype)
        && Arrays.equals(t.shape, shape);
  }

  @Override
  public int hashCode() {
    return (name.hashCode() * 31 + dtype.hashCode()) * 31 + Arrays.hashCode(shape);
  }

  @Override
  public String toString() {
    return name + ": " + dtype + " " + Arrays.toString(shape);
  }

  private static int elementBytes(String dtype) {
    if (dtype.equals("U8")) {
      return 1;
    }
    return DType.fromSafetensors(dtype).bytes();
  }
}
