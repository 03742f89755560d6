package org.tensorcache.store.segment;

import static org.tensorcache.store.segment.SafetensorsChecks.reject;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.io.DataRegionReader;
import org.tensorcache.store.segment.SegmentRejectedException.Reason;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * Writes one block as a safetensors segment and reads it back with strict checks.
 *
 * <p>Layout: one tensor of the field's dtype ({@code F32}, {@code F16}, {@code BF16}, {@code I32}
 * or {@code I64}) per field of shape {@code [length, ...fieldShape]}, in spec order, then {@value
 * #PRESENT} ({@code U8}, {@code [ceil(length/8)]}): bit {@code i % 8} of byte {@code i / 8} is set
 * when example {@code start + i} is present.
 */
public final class SegmentFile {
  /** The {@code format} metadata value of a segment. */
  public static final String FORMAT = "tensorcache-segment/1";

  /** Name of the packed presence tensor; field names cannot start with an underscore. */
  public static final String PRESENT = "__present__";

  static final List<String> KEYS =
      List.of("format", "cache_id", "fingerprint", "range", "start", "length", "present", "crc32c");

  private SegmentFile() {}

  /** Atomically writes {@code block} to {@code file}, tagged with {@code fingerprint}. */
  public static void write(Path file, Block block, Fingerprint fingerprint) throws IOException {
    org.tensorcache.store.io.AtomicFiles.write(file, ch -> writeTo(ch, block, fingerprint));
  }

  /** Writes the segment's bytes to {@code ch} from position 0 (no fsync, no rename). */
  public static void writeTo(FileChannel ch, Block block, Fingerprint fingerprint)
      throws IOException {
    fingerprint.checkBelongsTo(block.spec());
    SafetensorsWriter.writeTo(ch, tensors(block), metadata(fingerprint, block), data(block));
  }

  /** The segment's bytes, in memory: what {@link #write} puts in the file. */
  public static byte[] encode(Block block, Fingerprint fingerprint) throws IOException {
    fingerprint.checkBelongsTo(block.spec());
    return SafetensorsWriter.encode(tensors(block), metadata(fingerprint, block), data(block));
  }

  private static List<TensorInfo> tensors(Block block) {
    return tensors(block.spec(), block.range());
  }

  private static Map<String, String> metadata(Fingerprint fingerprint, Block block) {
    return metadata(fingerprint, block.spec(), block.range(), block.presentCount());
  }

  /** The data region of {@code block}: its fields' values in spec order, then presence bits. */
  private static SafetensorsWriter.DataWriter data(Block block) {
    CacheSpec spec = block.spec();
    return out -> {
      for (int f = 0; f < spec.fields().size(); f++) {
        DType t = spec.fields().get(f).dtype();
        int elements = block.length() * spec.fields().get(f).width();
        int chunkSize = Math.min(1 << 16, elements);
        Object chunk = t.newArray(chunkSize);
        for (int from = 0; from < elements; from += chunkSize) {
          int n = Math.min(chunkSize, elements - from);
          block.copyRawValues(f, from, chunk, 0, n);
          out.putElements(t, chunk, 0, n);
        }
      }
      byte[] packed = pack(block.presenceWords(), block.length());
      out.putBytes(packed, 0, packed.length);
    };
  }

  /**
   * Reads the segment in {@code file}, which must be range {@code range} of the cache that {@code
   * expected} identifies; any failed check throws {@link SegmentRejectedException}.
   */
  public static Block read(Path file, CacheSpec spec, Fingerprint expected, int range)
      throws IOException {
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      return read(file, ch, spec, expected, range);
    }
  }

  /**
   * Like {@link #read(Path, CacheSpec, Fingerprint, int)}, from {@code ch}; {@code file} names it.
   */
  public static Block read(
      Path file, FileChannel ch, CacheSpec spec, Fingerprint expected, int range)
      throws IOException {
    return read(file, ch, null, spec, expected, range);
  }

  /**
   * Like {@link #read(Path, CacheSpec, Fingerprint, int)}, of a segment's bytes in memory ({@link
   * #encode}'s), with every check.
   */
  public static Block decode(byte[] bytes, CacheSpec spec, Fingerprint expected, int range)
      throws IOException {
    return read(Path.of("in-memory segment"), null, ByteBuffer.wrap(bytes), spec, expected, range);
  }

  /** Reads from {@code ch}, or from {@code inMemory} where it is given. */
  private static Block read(
      Path file,
      FileChannel ch,
      ByteBuffer inMemory,
      CacheSpec spec,
      Fingerprint expected,
      int range)
      throws IOException {
    expected.checkBelongsTo(spec);
    int length = spec.rangeLength(range);
    try {
      long size = inMemory != null ? inMemory.remaining() : ch.size();
      // a file of a few MiB is read whole: one read where the header and data would take three
      ByteBuffer whole =
          inMemory != null || size > WHOLE_FILE_BYTES ? inMemory : readWhole(ch, (int) size);
      byte[] header =
          whole != null
              ? SafetensorsReader.read(file, whole)
              : SafetensorsReader.read(file, ch, size);
      SegmentChecks.Layout layout =
          SegmentChecks.checkLayout(file, size, header, spec, expected, range);
      DataRegionReader in =
          whole != null
              ? new DataRegionReader(whole, layout.dataStart(), layout.dataLength())
              : new DataRegionReader(ch, layout.dataStart(), layout.dataLength());
      Object[] values = new Object[spec.fields().size()];
      for (int f = 0; f < values.length; f++) {
        FieldSpec field = spec.fields().get(f);
        int elements = length * field.width();
        values[f] = field.dtype().newArray(elements);
        in.getElements(field.dtype(), values[f], 0, elements);
      }
      byte[] packed = new byte[(length + 7) / 8];
      in.getBytes(packed, 0, packed.length);
      long[] words = SegmentChecks.unpackPresence(file, packed, length);
      SegmentChecks.checkHeader(file, header, spec, expected, range, countBits(words), in.crc32c());
      try {
        return Block.adopt(spec, range, values, words);
      } catch (IllegalArgumentException e) {
        throw reject(file, Reason.BAD_VALUE, "%s", e.getMessage());
      }
    } catch (EOFException e) {
      throw reject(file, Reason.TRUNCATED, "%s", e.getMessage());
    }
  }

  private static int countBits(long[] words) {
    int count = 0;
    for (long w : words) {
      count += Long.bitCount(w);
    }
    return count;
  }

  /** Files up to this size are read in one go. */
  private static final int WHOLE_FILE_BYTES = 4 << 20;

  private static ByteBuffer readWhole(FileChannel ch, int size) throws IOException {
    ByteBuffer all = ByteBuffer.allocate(size);
    while (all.hasRemaining()) {
      if (ch.read(all, all.position()) < 0) {
        throw new EOFException("file ended at " + all.position() + " of " + size + " bytes");
      }
    }
    return all.flip();
  }

  /** The metadata of a segment, in the order the writer puts it, without the checksum. */
  static Map<String, String> metadata(
      Fingerprint fingerprint, CacheSpec spec, int range, int present) {
    Map<String, String> meta = new LinkedHashMap<>();
    meta.put("format", FORMAT);
    meta.put("cache_id", fingerprint.cacheId());
    meta.put("fingerprint", fingerprint.hex());
    meta.put("range", Integer.toString(range));
    meta.put("start", Long.toString(spec.rangeStart(range)));
    meta.put("length", Integer.toString(spec.rangeLength(range)));
    meta.put("present", Integer.toString(present));
    return meta;
  }

  /** The tensors of range {@code range}: the fields in spec order, then the presence bits. */
  static List<TensorInfo> tensors(CacheSpec spec, int range) {
    int length = spec.rangeLength(range);
    List<TensorInfo> tensors = new ArrayList<>(spec.fields().size() + 1);
    for (FieldSpec f : spec.fields()) {
      int[] fieldShape = f.shape();
      long[] shape = new long[fieldShape.length + 1];
      shape[0] = length;
      for (int i = 0; i < fieldShape.length; i++) {
        shape[i + 1] = fieldShape[i];
      }
      tensors.add(new TensorInfo(f.name(), f.dtype().safetensorsName(), shape));
    }
    tensors.add(new TensorInfo(PRESENT, "U8", new long[] {(length + 7) / 8}));
    return tensors;
  }

  private static byte[] pack(long[] words, int length) {
    byte[] packed = new byte[(length + 7) / 8];
    for (int i = 0; i < packed.length; i++) {
      packed[i] = (byte) (words[i >>> 3] >>> ((i & 7) << 3));
    }
    return packed;
  }
}
