package org.tensorcache.bench.micro;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.segment.SegmentFile;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * {@link SegmentFile}'s own encoder and strict reader over a byte array instead of a file: the same
 * code, minus the temp file, system calls, fsyncs and rename.
 */
final class SegmentBytes {
  private static final int HEADER_ROOM = 1 << 16; // far more than any header of these layouts

  private SegmentBytes() {}

  /** The bytes {@link SegmentFile#write} puts in the file for {@code block}. */
  static byte[] encode(Block block, Fingerprint fingerprint) throws IOException {
    long data = (block.length() + 7) / 8;
    for (var f : block.spec().fields()) {
      data += (long) block.length() * f.width() * Float.BYTES;
    }
    MemoryChannel ch = new MemoryChannel(new byte[(int) (8 + HEADER_ROOM + data)]);
    SegmentFile.writeTo(ch, block, fingerprint);
    return Arrays.copyOf(ch.bytes, (int) ch.end);
  }

  /** What {@link SegmentFile#read} returns for a file holding {@code bytes}. */
  static Block decode(byte[] bytes, CacheSpec spec, Fingerprint expected) throws IOException {
    return SegmentFile.read(Path.of("memory-segment"), new MemoryChannel(bytes), spec, expected, 0);
  }

  /**
   * Bytes of the segment of each layout, after checking, before anything is timed, that they equal
   * the file {@link SegmentFile#write} writes and that both read back as the block.
   */
  static Map<String, Integer> checkedSizes(List<String> layouts) throws IOException {
    Map<String, Integer> sizes = new LinkedHashMap<>();
    Path dir = Files.createTempDirectory("micro-segments");
    try {
      for (String layout : layouts) {
        CacheSpec spec = Fixtures.spec(layout);
        Fingerprint fp = Fixtures.fingerprint(spec);
        Block block = Fixtures.full(spec, 1);
        Path file = dir.resolve(layout + ".safetensors");
        SegmentFile.write(file, block, fp);
        byte[] memory = encode(block, fp);
        if (!Arrays.equals(memory, Files.readAllBytes(file))) {
          throw new IllegalStateException(
              "in-memory segment of " + layout + " differs from SegmentFile.write's bytes");
        }
        if (!SegmentFile.read(file, spec, fp, 0).equals(block)
            || !decode(memory, spec, fp).equals(block)) {
          throw new IllegalStateException("segment of " + layout + " does not read back");
        }
        Files.delete(file);
        sizes.put(layout, memory.length);
      }
    } finally {
      Files.deleteIfExists(dir);
    }
    return sizes;
  }

  /** A fixed-size byte array behind the positional calls the segment code makes. */
  private static final class MemoryChannel extends FileChannel {
    private final byte[] bytes;
    private long end; // one past the last byte written

    MemoryChannel(byte[] bytes) {
      this.bytes = bytes;
    }

    @Override
    public int read(ByteBuffer dst, long position) {
      if (position >= bytes.length) {
        return -1;
      }
      int n = (int) Math.min(dst.remaining(), bytes.length - position);
      dst.put(bytes, (int) position, n);
      return n;
    }

    @Override
    public int write(ByteBuffer src, long position) throws IOException {
      int n = src.remaining();
      if (position + n > bytes.length) {
        throw new IOException(
            "write of " + n + " bytes at " + position + " past the end " + bytes.length);
      }
      src.get(bytes, (int) position, n);
      end = Math.max(end, position + n);
      return n;
    }

    @Override
    public long size() {
      return bytes.length;
    }

    @Override
    public void force(boolean metaData) {}

    @Override
    protected void implCloseChannel() {}

    // The stream-style and mapping calls, which the segment code never makes.

    @Override
    public int read(ByteBuffer dst) {
      throw unsupported();
    }

    @Override
    public long read(ByteBuffer[] dsts, int offset, int length) {
      throw unsupported();
    }

    @Override
    public int write(ByteBuffer src) {
      throw unsupported();
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) {
      throw unsupported();
    }

    @Override
    public long position() {
      throw unsupported();
    }

    @Override
    public FileChannel position(long newPosition) {
      throw unsupported();
    }

    @Override
    public FileChannel truncate(long size) {
      throw unsupported();
    }

    @Override
    public long transferTo(long position, long count, WritableByteChannel target) {
      throw unsupported();
    }

    @Override
    public long transferFrom(ReadableByteChannel src, long position, long count) {
      throw unsupported();
    }

    @Override
    public MappedByteBuffer map(MapMode mode, long position, long size) {
      throw unsupported();
    }

    @Override
    public FileLock lock(long position, long size, boolean shared) {
      throw unsupported();
    }

    @Override
    public FileLock tryLock(long position, long size, boolean shared) {
      throw unsupported();
    }

    private static UnsupportedOperationException unsupported() {
      return new UnsupportedOperationException("a memory channel reads and writes by position");
    }
  }
}
