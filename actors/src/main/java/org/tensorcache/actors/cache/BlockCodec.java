package org.tensorcache.actors.cache;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.tensorcache.model.spec.DType;
import org.tensorcache.model.spec.FieldSpec;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.spec.CacheSpec;

/**
 * A compact binary form of a block: the spec, the range, the presence words, then the values of
 * present examples only (little-endian floats, field by field), so a sparse delta is small. No
 * boxing and no object per example.
 */
public final class BlockCodec {
  private static final byte VERSION = 1;

  private BlockCodec() {}

  /** Exact encoded size of {@code block}. */
  public static int size(Block block) {
    CacheSpec spec = block.spec();
    int size = 1 + string(spec.name()) + 8 + 4 + 4 + 4 + 4 + 8 * words(block.length());
    int rowFloats = 0;
    for (FieldSpec f : spec.fields()) {
      size += string(f.name()) + 1 + 4 + 4 * f.shape().length;
      rowFloats += f.width();
    }
    return size + 4 * rowFloats * block.presentCount();
  }

  /** Encodes {@code block} into a new little-endian byte array. */
  public static byte[] encode(Block block) {
    ByteBuffer out = ByteBuffer.allocate(size(block)).order(ByteOrder.LITTLE_ENDIAN);
    CacheSpec spec = block.spec();
    out.put(VERSION);
    putString(out, spec.name());
    out.putLong(spec.n()).putInt(spec.rangeSize()).putInt(spec.fields().size());
    for (FieldSpec f : spec.fields()) {
      putString(out, f.name());
      out.put((byte) f.dtype().ordinal()).putInt(f.shape().length);
      for (int d : f.shape()) {
        out.putInt(d);
      }
    }
    out.putInt(block.range()).putInt(block.presentCount());
    long[] words = block.presenceWords();
    for (long w : words) {
      out.putLong(w);
    }
    for (int f = 0; f < spec.fields().size(); f++) {
      float[] row = new float[spec.fields().get(f).width()];
      for (long i = block.start(); i < block.start() + block.length(); i++) {
        if (block.isPresent(i)) {
          block.copyValues(f, i, row, 0);
          for (float v : row) {
            out.putFloat(v);
          }
        }
      }
    }
    return out.array();
  }

  /** Decodes what {@link #encode} wrote; malformed bytes give an IllegalArgumentException. */
  public static Block decode(byte[] bytes) {
    ByteBuffer in = ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN);
    try {
      byte version = in.get();
      if (version != VERSION) {
        throw new IllegalArgumentException("block codec version " + version + ", expected 1");
      }
      String name = getString(in);
      long n = in.getLong();
      int rangeSize = in.getInt();
      int fieldCount = in.getInt();
      List<FieldSpec> fields = new ArrayList<>(fieldCount);
      for (int f = 0; f < fieldCount; f++) {
        String field = getString(in);
        DType dtype = DType.values()[in.get()];
        int[] shape = new int[in.getInt()];
        for (int d = 0; d < shape.length; d++) {
          shape[d] = in.getInt();
        }
        fields.add(new FieldSpec(field, dtype, shape));
      }
      CacheSpec spec = new CacheSpec(name, n, fields, rangeSize);
      int range = in.getInt();
      int present = in.getInt();
      int length = spec.rangeLength(range);
      long[] words = new long[words(length)];
      for (int w = 0; w < words.length; w++) {
        words[w] = in.getLong();
      }
      float[][] values = new float[fieldCount][];
      for (int f = 0; f < fieldCount; f++) {
        int width = fields.get(f).width();
        values[f] = new float[length * width];
        Arrays.fill(values[f], Block.SENTINEL);
        for (int i = 0; i < length; i++) {
          if ((words[i >>> 6] & (1L << i)) != 0) {
            for (int k = 0; k < width; k++) {
              values[f][i * width + k] = in.getFloat();
            }
          }
        }
      }
      Block block = Block.adopt(spec, range, values, words);
      if (block.presentCount() != present || in.hasRemaining()) {
        throw new IllegalArgumentException(
            "block of range " + range + " is inconsistent: " + in.remaining() + " bytes left");
      }
      return block;
    } catch (java.nio.BufferUnderflowException | ArrayIndexOutOfBoundsException e) {
      throw new IllegalArgumentException(
          "block bytes are truncated (" + bytes.length + " bytes)", e);
    }
  }

  private static int words(int length) {
    return (length + 63) / 64;
  }

  private static int string(String s) {
    return 4 + s.getBytes(StandardCharsets.UTF_8).length;
  }

  private static void putString(ByteBuffer out, String s) {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    out.putInt(b.length).put(b);
  }

  private static String getString(ByteBuffer in) {
    int length = in.getInt();
    if (length < 0 || length > in.remaining()) {
      throw new IllegalArgumentException("string of " + length + " bytes in a block message");
    }
    byte[] b = new byte[length];
    in.get(b);
    return new String(b, StandardCharsets.UTF_8);
  }
}
