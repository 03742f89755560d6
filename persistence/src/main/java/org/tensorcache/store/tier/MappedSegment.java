package org.tensorcache.store.tier;

import static org.tensorcache.store.segment.SafetensorsChecks.reject;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileChannel.MapMode;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.zip.CRC32C;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.segment.SafetensorsReader;
import org.tensorcache.store.segment.SegmentChecks;
import org.tensorcache.store.segment.SegmentFile;
import org.tensorcache.store.segment.SegmentRejectedException;
import org.tensorcache.store.segment.SegmentRejectedException.Reason;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * The warm tier's read side: a segment file ({@link SegmentFile}) mapped read-only, whose examples
 * are copied out of the page cache on demand rather than loaded as a block. Thread-safe.
 *
 * <p>{@link #open} makes the checks {@link SegmentFile#read} makes, with the same reasons of {@link
 * SegmentRejectedException}: the canonical header, fingerprint and cache id, range, start and
 * length, the file's size, no presence bit beyond the length, and the CRC32C of the data region,
 * computed once over the mapping (so opening reads the file once). It skips one: the scan for a NaN
 * in a present example or anything but the sentinel in a missing one. The checksum matching proves
 * the bytes are the ones the writer wrote, and the writer wrote a {@link Block}, which holds
 * neither; a file forged with a NaN and a checksum to match is accepted here (and rejected by
 * {@link #toBlock}, which builds a block and so checks its values), where {@link SegmentFile#read}
 * rejects it. The scan would be a second pass over the file at every open.
 *
 * <p>Segment files are replaced by rename, never changed in place, so a mapping's bytes stay the
 * ones checked; a file truncated under a mapping would fault its readers.
 */
public final class MappedSegment implements AutoCloseable {
  /** The largest single mapping: a file up to this size is mapped whole, in one call. */
  static final long MAX_CHUNK_BYTES = 1L << 30;

  private final Path file;
  private final CacheSpec spec;
  private final int range;
  private final long start;
  private final int length;
  private final int[] widths;
  private final long[] presence;
  private final int presentCount;
  private final long mappedBytes;
  private volatile MappedTensor[] tensors;

  private MappedSegment(
      Path file, CacheSpec spec, int range, MappedTensor[] tensors, long[] presence, long bytes) {
    this.file = file;
    this.spec = spec;
    this.range = range;
    this.start = spec.rangeStart(range);
    this.length = spec.rangeLength(range);
    this.widths = spec.fields().stream().mapToInt(FieldSpec::width).toArray();
    this.tensors = tensors;
    this.presence = presence;
    this.presentCount = Arrays.stream(presence).mapToInt(Long::bitCount).sum();
    this.mappedBytes = bytes;
  }

  /**
   * Maps the segment in {@code file}, which must be range {@code range} of the cache that {@code
   * expected} identifies; a failed check throws {@link SegmentRejectedException}.
   */
  public static MappedSegment open(Path file, CacheSpec spec, Fingerprint expected, int range)
      throws IOException {
    return open(file, spec, expected, range, MAX_CHUNK_BYTES);
  }

  /** {@link #open}, mapping no more than {@code maxChunkBytes} at once. */
  static MappedSegment open(
      Path file, CacheSpec spec, Fingerprint expected, int range, long maxChunkBytes)
      throws IOException {
    expected.checkBelongsTo(spec);
    int length = spec.rangeLength(range);
    try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
      long size = ch.size();
      // a file that fits one mapping is mapped once, its tensors slices of it
      ByteBuffer whole = size <= maxChunkBytes ? ch.map(MapMode.READ_ONLY, 0, size) : null;
      byte[] header =
          whole != null
              ? SafetensorsReader.read(file, whole)
              : SafetensorsReader.read(file, ch, size);
      SegmentChecks.Layout layout =
          SegmentChecks.checkLayout(file, size, header, spec, expected, range);
      MappedTensor.Mapper mapper =
          whole != null
              ? (offset, bytes) -> whole.slice((int) offset, (int) bytes)
              : (offset, bytes) -> ch.map(MapMode.READ_ONLY, offset, bytes);
      CRC32C crc = new CRC32C();
      int fields = spec.fields().size();
      MappedTensor[] tensors = new MappedTensor[fields];
      for (int f = 0; f < fields; f++) {
        FieldSpec field = spec.fields().get(f);
        tensors[f] =
            MappedTensor.map(
                mapper,
                layout.tensorStart(f),
                field.name(),
                field.dtype(),
                field.width(),
                length,
                maxChunkBytes);
        tensors[f].updateCrc(crc);
      }
      byte[] packed = new byte[(int) layout.tensorBytes(fields)];
      mapper.map(layout.tensorStart(fields), packed.length).get(packed);
      crc.update(packed);
      long[] words = SegmentChecks.unpackPresence(file, packed, length);
      int count = Arrays.stream(words).mapToInt(Long::bitCount).sum();
      SegmentChecks.checkHeader(file, header, spec, expected, range, count, (int) crc.getValue());
      long bytes = whole != null ? size : layout.dataLength() - packed.length;
      return new MappedSegment(file, spec, range, tensors, words, bytes);
    }
  }

  /** Whether example {@code index}, which must be in this range, is present. */
  public boolean isPresent(long index) {
    int i = local(index);
    return (presence[i >>> 6] & (1L << i)) != 0;
  }

  /**
   * Copies every field of example {@code index} into {@code out[f]} (an array of the field's dtype)
   * at {@code position * width} and returns true when it is present; returns false, copying
   * nothing, when it is not. Allocates nothing.
   */
  public boolean gather(long index, Object[] out, int position) {
    MappedTensor[] t = tensors();
    int i = local(index);
    if ((presence[i >>> 6] & (1L << i)) == 0) {
      return false;
    }
    for (int f = 0; f < t.length; f++) {
      t[f].copyRows(i, 1, out[f], position * widths[f]);
    }
    return true;
  }

  /**
   * Copies the values of {@code indices}, all in this range, into {@code out} at their positions
   * and returns the positions that were missing (an empty array when none was), as the gather of
   * hot blocks does.
   */
  public int[] gather(long[] indices, Object[] out) {
    int[] missing = new int[8];
    int count = 0;
    for (int p = 0; p < indices.length; p++) {
      if (!gather(indices[p], out, p)) {
        missing = count == missing.length ? Arrays.copyOf(missing, count * 2) : missing;
        missing[count++] = p;
      }
    }
    return Arrays.copyOf(missing, count);
  }

  /**
   * The whole range as a block, equal to what {@link SegmentFile#read} returns; its arrays come
   * from {@code pool} where it has them (null: always new ones). A value a block cannot hold is
   * {@link Reason#BAD_VALUE}, as there.
   */
  public Block toBlock(ArrayPool pool) {
    MappedTensor[] t = tensors();
    Object[] values = pool == null ? null : pool.takeArrays(spec, range);
    if (values == null) {
      values = new Object[t.length];
      for (int f = 0; f < t.length; f++) {
        values[f] = spec.fields().get(f).dtype().newArray(length * widths[f]);
      }
    }
    for (int f = 0; f < t.length; f++) {
      t[f].copyRows(0, length, values[f], 0); // every element: recycled arrays hold stale ones
    }
    try {
      return Block.adopt(spec, range, values, presence.clone());
    } catch (IllegalArgumentException e) {
      throw reject(file, Reason.BAD_VALUE, "%s", e.getMessage());
    }
  }

  /** The whole range as a block in new arrays. */
  public Block toBlock() {
    return toBlock(null);
  }

  /** The range index. */
  public int range() {
    return range;
  }

  /** The number of present examples. */
  public int presentCount() {
    return presentCount;
  }

  /** The bytes of the file this segment keeps mapped. */
  public long mappedBytes() {
    return mappedBytes;
  }

  /**
   * Drops the mappings. Java 17 has no portable way to unmap a file: the mapping goes when the
   * collector finds it unreachable, and until then the file's pages stay in the page cache's hands,
   * which frees them under pressure. A gather after close throws.
   */
  @Override
  public void close() {
    tensors = null;
  }

  private MappedTensor[] tensors() {
    MappedTensor[] t = tensors;
    if (t == null) {
      throw new IllegalStateException(
          String.format(
              "segment of range %d of cache '%s' is closed: %s", range, spec.name(), file));
    }
    return t;
  }

  private int local(long index) {
    if (index < start || index >= start + length) {
      throw new IndexOutOfBoundsException(
          String.format(
              "index %d out of range [%d, %d) of range %d of cache '%s'",
              index, start, start + length, range, spec.name()));
    }
    return (int) (index - start);
  }
}
