package org.tensorcache.actors.cache;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldArrays;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.spec.CacheSpec;

/**
 * A compact binary form of a block: the spec, the range, the presence words, then the values of
 * present examples only (little-endian elements of each field's dtype, field by field), so a sparse
 * delta is small. No boxing and no object per example.
 *
 * <p>It carries the blocks that travel by gossip, whose values take at most {@code
 * tensorcache.replication.gossip-budget} (128 KiB by default); larger ranges are replicated by
 * reference. A message is decoded into the whole range, so one whose spec would take more than
 * {@link #MAX_VALUE_BYTES} is refused before anything is allocated for it.
 */
public final class BlockCodec {
  /** The most bytes of values a decoded block may take, far above any gossip budget. */
  public static final long MAX_VALUE_BYTES = 64L << 20;

  private static final byte VERSION = 1;

  private BlockCodec() {}

  /** Exact encoded size of {@code block}. */
  public static int size(Block block) {
    CacheSpec spec = block.spec();
    int size = 1 + string(spec.name()) + 8 + 4 + 4 + 4 + 4 + 8 * words(block.length());
    int rowBytes = 0;
    for (FieldSpec f : spec.fields()) {
      size += string(f.name()) + 1 + 4 + 4 * f.shape().length;
      rowBytes += f.width() * f.dtype().bytes();
    }
    return size + rowBytes * block.presentCount();
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
      DType t = spec.fields().get(f).dtype();
      int width = spec.fields().get(f).width();
      Object raw = t.newArray(block.length() * width);
      block.copyRawValues(f, 0, raw, 0, block.length() * width);
      for (int i = 0; i < block.length(); i++) {
        if ((words[i >>> 6] & (1L << i)) != 0) {
          FieldArrays.write(t, raw, i * width, width, out);
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
      // a field takes at least 9 bytes (an empty name, the dtype, the rank): no allocation by a
      // count the bytes cannot hold
      if (fieldCount < 0 || fieldCount > in.remaining() / 9) {
        throw new IllegalArgumentException(
            fieldCount + " fields in a block message of " + bytes.length + " bytes");
      }
      List<FieldSpec> fields = new ArrayList<>(fieldCount);
      for (int f = 0; f < fieldCount; f++) {
        String field = getString(in);
        int ordinal = in.get();
        if (ordinal < 0 || ordinal >= DType.values().length) {
          throw new IllegalArgumentException("dtype " + ordinal + " in a block message");
        }
        DType dtype = DType.values()[ordinal];
        int rank = in.getInt();
        if (rank < 0 || rank > in.remaining() / 4) {
          throw new IllegalArgumentException(
              "rank "
                  + rank
                  + " of field '"
                  + field
                  + "' in a block message of "
                  + bytes.length
                  + " bytes");
        }
        int[] shape = new int[rank];
        for (int d = 0; d < shape.length; d++) {
          shape[d] = in.getInt();
        }
        fields.add(new FieldSpec(field, dtype, shape));
      }
      CacheSpec spec = new CacheSpec(name, n, fields, rangeSize);
      int range = in.getInt();
      if (range < 0 || range >= spec.rangeCount()) {
        throw new IllegalArgumentException(
            String.format(
                "range %d of cache '%s' in a block message, expected [0, %d)",
                range, name, spec.rangeCount()));
      }
      int present = in.getInt();
      int length = spec.rangeLength(range);
      long valueBytes = 0;
      for (FieldSpec f : fields) {
        valueBytes += (long) length * f.width() * f.dtype().bytes();
      }
      if (valueBytes > MAX_VALUE_BYTES) {
        throw new IllegalArgumentException(
            String.format(
                "block of range %d of cache '%s' would take %d bytes of values, expected at most"
                    + " %d: a range that large is replicated by reference, not in a block message",
                range, name, valueBytes, MAX_VALUE_BYTES));
      }
      long[] words = new long[words(length)];
      for (int w = 0; w < words.length; w++) {
        words[w] = in.getLong();
      }
      Object[] values = new Object[fieldCount];
      for (int f = 0; f < fieldCount; f++) {
        DType t = fields.get(f).dtype();
        int width = fields.get(f).width();
        values[f] = FieldArrays.sentinels(t, length * width);
        for (int i = 0; i < length; i++) {
          if ((words[i >>> 6] & (1L << i)) != 0) {
            FieldArrays.read(t, in, values[f], i * width, width);
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
