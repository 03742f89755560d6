package org.tensorcache.store.segment;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.tensorcache.store.Fixtures;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/** A segment reads back as exactly the block that was written, bit for bit. */
class SegmentCodecPropertyTest {
  private static final CacheSpec SPEC = Fixtures.spec();
  private static final Fingerprint FP = Fixtures.fingerprint(SPEC);

  @Property(tries = 50)
  void segmentsRoundTrip(
      @ForAll @IntRange(min = 0, max = 3) int range,
      @ForAll long seed,
      @ForAll @IntRange(min = 0, max = 100) int percentPresent)
      throws IOException {
    Path dir = Files.createTempDirectory("segment-property");
    try {
      Block block = Fixtures.block(SPEC, range, seed, percentPresent);
      Path file = dir.resolve(SegmentStore.fileName(range));
      SegmentFile.write(file, block, FP);
      assertEquals(block, SegmentFile.read(file, SPEC, FP, range));
    } finally {
      Files.deleteIfExists(dir.resolve(SegmentStore.fileName(range)));
      Files.delete(dir);
    }
  }
}
