package org.tensorcache.bench.micro;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.segment.SegmentFile;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * {@link SegmentFile}'s own encoder and strict reader over a {@link MemoryChannel} instead of a
 * file: the same code, minus the temp file, fsyncs and rename.
 */
final class SegmentBytes {
  private static final Path NAME = Path.of("memory-segment");
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
    return Arrays.copyOf(ch.bytes(), (int) ch.end());
  }

  /** What {@link SegmentFile#read} returns for a file holding {@code bytes}. */
  static Block decode(byte[] bytes, CacheSpec spec, Fingerprint expected, int range)
      throws IOException {
    return SegmentFile.read(NAME, new MemoryChannel(bytes), spec, expected, range);
  }
}
