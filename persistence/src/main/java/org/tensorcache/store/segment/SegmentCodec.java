package org.tensorcache.store.segment;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.rows.RowBlock;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * How one range's values become a segment's bytes and back, for the stores that keep segments
 * ({@link Segments}): {@link #BLOCKS} for caches of fixed-shape fields ({@link SegmentFile}),
 * {@link #ROWS} for per-token ones ({@link RowSegmentFile}). Both read with every check of their
 * format.
 *
 * @param <V> what one range's values are: a {@link Block} or a {@link RowBlock}
 */
public interface SegmentCodec<V> {
  /** Blocks, for caches of fixed-shape fields. */
  SegmentCodec<Block> BLOCKS =
      new SegmentCodec<>() {
        @Override
        public void checkSpec(CacheSpec spec) {
          spec.checkFixedShape("a store of block segments");
        }

        @Override
        public CacheSpec spec(Block values) {
          return values.spec();
        }

        @Override
        public int range(Block values) {
          return values.range();
        }

        @Override
        public int presentCount(Block values) {
          return values.presentCount();
        }

        @Override
        public void writeTo(FileChannel ch, Block values, Fingerprint fingerprint)
            throws IOException {
          SegmentFile.writeTo(ch, values, fingerprint);
        }

        @Override
        public Block read(Path file, CacheSpec spec, Fingerprint expected, int range)
            throws IOException {
          return SegmentFile.read(file, spec, expected, range);
        }
      };

  /** Rows, for per-token caches. */
  SegmentCodec<RowBlock> ROWS =
      new SegmentCodec<>() {
        @Override
        public void checkSpec(CacheSpec spec) {
          spec.checkPerToken("a store of row segments");
        }

        @Override
        public CacheSpec spec(RowBlock values) {
          return values.spec();
        }

        @Override
        public int range(RowBlock values) {
          return values.range();
        }

        @Override
        public int presentCount(RowBlock values) {
          return values.presentCount();
        }

        @Override
        public void writeTo(FileChannel ch, RowBlock values, Fingerprint fingerprint)
            throws IOException {
          RowSegmentFile.writeTo(ch, values, fingerprint);
        }

        @Override
        public RowBlock read(Path file, CacheSpec spec, Fingerprint expected, int range)
            throws IOException {
          return RowSegmentFile.read(file, spec, expected, range);
        }
      };

  /** Throws unless a cache of {@code spec} keeps its ranges this way, naming it. */
  void checkSpec(CacheSpec spec);

  /** The cache {@code values} belong to. */
  CacheSpec spec(V values);

  /** The range {@code values} are. */
  int range(V values);

  /** Examples present in {@code values}. */
  int presentCount(V values);

  /** Writes the segment's bytes to {@code ch} from position 0 (no fsync, no rename). */
  void writeTo(FileChannel ch, V values, Fingerprint fingerprint) throws IOException;

  /**
   * Reads the segment in {@code file}, which must be range {@code range} of the cache {@code
   * expected} identifies; any failed check throws {@link SegmentRejectedException}.
   */
  V read(Path file, CacheSpec spec, Fingerprint expected, int range) throws IOException;
}
