package org.tensorcache.store.segment;

import static org.tensorcache.store.segment.SafetensorsChecks.expect;
import static org.tensorcache.store.segment.SafetensorsChecks.reject;
import static org.tensorcache.store.segment.SafetensorsWriter.crcHex;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.tensorcache.model.spec.DType;
import org.tensorcache.model.spec.FieldSpec;
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

  private static final List<String> KEYS =
      List.of("format", "cache_id", "fingerprint", "range", "start", "length", "present", "crc32c");

  private SegmentFile() {}

  /** Atomically writes {@code block} to {@code file}, tagged with {@code fingerprint}. */
  public static void write(Path file, Block block, Fingerprint fingerprint) throws IOException {
    org.tensorcache.store.io.AtomicFiles.write(file, ch -> writeTo(ch, block, fingerprint));
  }

  /** Writes the segment's bytes to {@code ch} from position 0 (no fsync, no rename). */
  public static void writeTo(FileChannel ch, Block block, Fingerprint fingerprint)
      throws IOException {
    CacheSpec spec = block.spec();
    fingerprint.checkBelongsTo(spec);
    List<TensorInfo> tensors = tensors(spec, block.range());
    Map<String, String> meta =
        metadata(fingerprint, block.spec(), block.range(), block.presentCount());
    SafetensorsWriter.writeTo(
        ch,
        tensors,
        meta,
        out -> {
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
        });
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
   * Like {@link #read(Path, CacheSpec, Fingerprint, int)}, or empty when there is no such file: one
   * open, not a check for the file and then an open.
   */
  public static Optional<Block> readIfPresent(
      Path file, CacheSpec spec, Fingerprint expected, int range) throws IOException {
    FileChannel ch;
    try {
      ch = FileChannel.open(file, StandardOpenOption.READ);
    } catch (NoSuchFileException e) {
      return Optional.empty();
    }
    try (ch) {
      return Optional.of(read(file, ch, spec, expected, range));
    }
  }

  /**
   * Like {@link #read(Path, CacheSpec, Fingerprint, int)}, from {@code ch}; {@code file} names it.
   */
  public static Block read(
      Path file, FileChannel ch, CacheSpec spec, Fingerprint expected, int range)
      throws IOException {
    expected.checkBelongsTo(spec);
    List<TensorInfo> tensors = tensors(spec, range);
    try {
      long size = ch.size();
      // a file of a few MiB is read whole: one read where the header and data would take three
      ByteBuffer whole = size <= WHOLE_FILE_BYTES ? readWhole(ch, (int) size) : null;
      byte[] header =
          whole != null
              ? SafetensorsReader.read(file, whole)
              : SafetensorsReader.read(file, ch, size);
      long dataLength = TensorInfo.dataLength(tensors);
      if (size != 8L + header.length + dataLength) {
        checkHeader(file, header, tensors, spec, expected, range); // names what is wrong first
        SafetensorsChecks.checkFileSize(file, size, header.length, dataLength);
      }
      int length = spec.rangeLength(range);
      long dataStart = 8L + header.length;
      DataRegionReader in =
          whole != null
              ? new DataRegionReader(whole, dataStart, dataLength)
              : new DataRegionReader(ch, dataStart, dataLength);
      Object[] values = new Object[spec.fields().size()];
      for (int f = 0; f < values.length; f++) {
        FieldSpec field = spec.fields().get(f);
        int elements = length * field.width();
        values[f] = field.dtype().newArray(elements);
        in.getElements(field.dtype(), values[f], 0, elements);
      }
      byte[] packed = new byte[(length + 7) / 8];
      in.getBytes(packed, 0, packed.length);
      long[] words = unpack(file, packed, length);
      int count = 0;
      for (long w : words) {
        count += Long.bitCount(w);
      }
      // the header this writer makes for what was read; byte equality checks every key at once
      Map<String, String> meta = metadata(expected, spec, range, count);
      meta.put("crc32c", crcHex(in.crc32c()));
      if (!java.util.Arrays.equals(header, SafetensorsJson.encode(tensors, meta))) {
        Map<String, String> found = checkHeader(file, header, tensors, spec, expected, range);
        expect(file, Reason.BAD_CHECKSUM, "crc32c", found, meta.get("crc32c"));
        expect(file, Reason.BAD_HEADER, "present", found, Integer.toString(count));
        throw reject(
            file, Reason.BAD_HEADER, "header is not in the canonical form this writer uses");
      }
      try {
        return Block.adopt(spec, range, values, words);
      } catch (IllegalArgumentException e) {
        throw reject(file, Reason.BAD_VALUE, "%s", e.getMessage());
      }
    } catch (EOFException e) {
      throw reject(file, Reason.TRUNCATED, "%s", e.getMessage());
    }
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

  /** The strict header checks one by one, for a header that is not the expected one. */
  private static Map<String, String> checkHeader(
      Path file,
      byte[] header,
      List<TensorInfo> tensors,
      CacheSpec spec,
      Fingerprint expected,
      int range) {
    ObjectNode root = SafetensorsJson.parse(file, header);
    Map<String, String> meta = SafetensorsChecks.metadata(file, root, KEYS);
    expect(file, Reason.BAD_HEADER, "format", meta, FORMAT);
    expect(file, Reason.FOREIGN_FINGERPRINT, "fingerprint", meta, expected.hex());
    expect(file, Reason.FOREIGN_FINGERPRINT, "cache_id", meta, expected.cacheId());
    expect(file, Reason.WRONG_RANGE, "range", meta, Integer.toString(range));
    expect(file, Reason.WRONG_RANGE, "start", meta, Long.toString(spec.rangeStart(range)));
    expect(file, Reason.WRONG_RANGE, "length", meta, Integer.toString(spec.rangeLength(range)));
    SafetensorsChecks.checkCrcSyntax(file, meta.get("crc32c"));
    SafetensorsChecks.checkTensors(file, root, tensors);
    return meta;
  }

  /** The metadata of a segment, in the order the writer puts it, without the checksum. */
  private static Map<String, String> metadata(
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

  private static long[] unpack(Path file, byte[] packed, int length) {
    if (length % 8 != 0 && (packed[packed.length - 1] & 0xff) >>> (length % 8) != 0) {
      throw reject(file, Reason.BAD_VALUE, "presence bits set beyond length %d", length);
    }
    long[] words = new long[(length + 63) / 64];
    for (int i = 0; i < packed.length; i++) {
      words[i >>> 3] |= (packed[i] & 0xffL) << ((i & 7) << 3);
    }
    return words;
  }
}
