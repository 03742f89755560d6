package org.tensorcache.store.tier;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.tier.SegmentReadFuzzTest.Case;

/**
 * Writes the seed inputs of {@link SegmentReadFuzzTest}: real segments of each of its cases (empty,
 * partly and wholly present, with infinities, negative zeros and extreme integers) and their data
 * regions for its forged mode, each followed by the bytes that pick the case and the mode.
 *
 * <p>Run from {@code persistence} after a build, with the test class path: {@code java -cp
 * target/test-classes:target/classes:$(cat cp.txt) org.tensorcache.store.tier.SegmentSeeds
 * src/test/resources/org/tensorcache/store/tier/SegmentReadFuzzTestInputs/readSegment}, where
 * {@code cp.txt} is from {@code mvn dependency:build-classpath -Dmdep.outputFile=cp.txt}.
 */
public final class SegmentSeeds {
  private SegmentSeeds() {}

  /** Writes the seeds into the directory {@code args[0]}. */
  public static void main(String[] args) throws IOException {
    Path dir = Files.createDirectories(Path.of(args[0]));
    for (int k = 0; k < SegmentReadFuzzTest.CASES.size(); k++) {
      Case c = SegmentReadFuzzTest.CASES.get(k);
      String name = c.spec().name();
      Block empty = Block.empty(c.spec(), c.range());
      Block partial = block(c.spec(), c.range(), 3);
      Block full = block(c.spec(), c.range(), 1);
      write(dir, name + "-empty", segment(empty, c), 0, false, k);
      write(dir, name + "-partial", segment(partial, c), 0, false, k);
      write(dir, name + "-full-chunked", segment(full, c), 1, false, k);
      write(dir, name + "-forged-partial", region(partial, c), 1, true, k);
    }
  }

  private static byte[] segment(Block block, Case c) throws IOException {
    return SegmentReadFuzzTest.encode(block, c.fingerprint());
  }

  /** The data region of {@code block}'s segment: what the forged mode takes. */
  private static byte[] region(Block block, Case c) throws IOException {
    byte[] bytes = segment(block, c);
    long header = java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).getLong();
    return Arrays.copyOfRange(bytes, 8 + (int) header, bytes.length);
  }

  /** The file, then the bytes the test consumes from the end: chunk, sentinels, forged, case. */
  private static void write(Path dir, String name, byte[] body, int chunk, boolean forged, int k)
      throws IOException {
    byte[] seed = Arrays.copyOf(body, body.length + 4);
    seed[body.length] = (byte) chunk;
    seed[body.length + 1] = (byte) (forged ? 1 : 0);
    seed[body.length + 2] = (byte) (forged ? 1 : 0);
    seed[body.length + 3] = (byte) k;
    Files.write(dir.resolve(name), seed);
  }

  /** A block with every {@code every}-th example present, values of every kind the dtypes hold. */
  private static Block block(CacheSpec spec, int range, int every) {
    Block b = Block.empty(spec, range);
    float[] special = {Float.NEGATIVE_INFINITY, -0f, 1.5f, Float.POSITIVE_INFINITY, -2048f, 65504f};
    for (int i = 0; i < b.length(); i += every) {
      float[][] row = new float[spec.fields().size()][];
      for (int f = 0; f < row.length; f++) {
        var field = spec.fields().get(f);
        row[f] = new float[field.width()];
        for (int e = 0; e < row[f].length; e++) {
          row[f][e] =
              field.dtype().isFloating()
                  ? special[(i + e + f) % special.length]
                  : (i % 2 == 0 ? -(i * 7 + e) : (float) (1 << 24) + i);
        }
      }
      b.put(b.start() + i, row);
    }
    return b;
  }
}
