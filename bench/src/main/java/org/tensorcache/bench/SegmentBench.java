package org.tensorcache.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.tensorcache.bench.fixture.Files2;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.report.Stats;
import org.tensorcache.bench.report.Table;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.io.AtomicFiles;
import org.tensorcache.store.segment.SegmentStore;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;
import org.tensorcache.store.spec.FingerprintInputs;

/**
 * Segment write (temp file, rename, fsync, directory fsync) and verified read, next to writing the
 * same bytes to a new file with fsync and reading them back raw, in alternating rounds; and next to
 * the least any crash-safe write and checked read of those bytes does.
 */
final class SegmentBench {
  private record Case(String name, int rangeSize, List<FieldSpec> fields, int files) {}

  private static final List<Case> CASES =
      List.of(
          new Case(
              "logp-1k",
              1024,
              List.of(FieldSpec.scalar("chosen_logp"), FieldSpec.scalar("rejected_logp")),
              256),
          new Case(
              "logp-64k",
              65536,
              List.of(FieldSpec.scalar("chosen_logp"), FieldSpec.scalar("rejected_logp")),
              16),
          new Case("features-4k", 4096, List.of(FieldSpec.vector("features", 128)), 8));

  /** Results of the floor's work, kept where the JIT cannot drop them. */
  private static volatile long sinkBits;

  private SegmentBench() {}

  static List<Map<String, Object>> run(Path work, RunSize size) throws IOException {
    Table table =
        new Table(null)
            .col("case", "case", "%-12s")
            .json("range_size")
            .json("fields")
            .col("files", "files", "%6d")
            .col("bytes_per_file", "bytes/file", "%10d")
            .col("segment_write_mb_s", "seg_w MB/s", "%11.1f")
            .col("raw_write_fsync_mb_s", "raw_w MB/s", "%11.1f")
            .col("write_ratio", "w ratio", "%7.2f")
            .col("segment_read_mb_s", "seg_r MB/s", "%11.1f")
            .col("raw_read_mb_s", "raw_r MB/s", "%11.1f")
            .col("read_ratio", "r ratio", "%7.2f")
            .col("crash_safe_write_floor_mb_s", "safe_w MB/s", "%11.1f")
            .col("write_ratio_to_floor", "w/safe", "%7.2f")
            .col("checked_read_floor_mb_s", "chk_r MB/s", "%11.1f")
            .col("read_ratio_to_floor", "r/chk", "%7.2f")
            .json("note");
    for (Case c : CASES) {
      int files = size.pick(c.files(), Math.max(2, c.files() / 4), 2);
      run(table, work.resolve(c.name()), c, files, size.pick(2, 2, 0), size.pick(5, 5, 1));
    }
    List<Map<String, Object>> rows = table.print();
    System.out.println(
        "  safe_w: the same bytes written crash-safely (temp file, rename, fsync, directory fsync);"
            + " chk_r: read raw, CRC32C, copied into floats: the least a safe write and a checked"
            + " read do");
    return rows;
  }

  /** The timed steps of a round, in the order it takes them. */
  private static final int SEG_W = 0, RAW_W = 1, SAFE_W = 2, SEG_R = 3, RAW_R = 4, CHECK_R = 5;

  private static void run(Table table, Path dir, Case c, int files, int warmup, int rounds)
      throws IOException {
    CacheSpec spec =
        new CacheSpec("bench", (long) files * c.rangeSize(), c.fields(), c.rangeSize());
    Fingerprint fp = Fingerprint.of(new FingerprintInputs("bench", "1", "w", "d", Map.of(), spec));
    List<Block> blocks = new ArrayList<>();
    SplittableRandom random = new SplittableRandom(1);
    for (int r = 0; r < files; r++) {
      blocks.add(filled(spec, r, random));
    }
    double[][] nanos = new double[6][rounds];
    long bytesPerFile = 0;
    // the first rounds run before the JIT has compiled the codecs: measured, then dropped
    for (int round = -warmup; round < rounds; round++) {
      double[] t = new double[6];
      Files2.fresh(dir);
      SegmentStore store = SegmentStore.open(dir.resolve("segments"), spec, fp);
      long t0 = System.nanoTime();
      for (Block b : blocks) {
        store.write(b);
      }
      t[SEG_W] = System.nanoTime() - t0;
      byte[] bytes = Files.readAllBytes(store.pathOf(0));
      bytesPerFile = bytes.length;
      Path raw = Files.createDirectories(dir.resolve("raw"));
      t0 = System.nanoTime();
      for (int r = 0; r < files; r++) {
        try (FileChannel ch =
            FileChannel.open(
                raw.resolve("f" + r), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
          ch.write(ByteBuffer.wrap(bytes));
          ch.force(true);
        }
      }
      t[RAW_W] = System.nanoTime() - t0;
      // the least a crash-safe write does: the same bytes through the same temp/rename/fsync path
      Path safe = Files.createDirectories(dir.resolve("safe"));
      t0 = System.nanoTime();
      for (int r = 0; r < files; r++) {
        AtomicFiles.write(safe.resolve("f" + r), ch -> ch.write(ByteBuffer.wrap(bytes)));
      }
      t[SAFE_W] = System.nanoTime() - t0;
      t0 = System.nanoTime();
      for (int r = 0; r < files; r++) {
        if (store.read(r).isEmpty()) {
          throw new IllegalStateException("segment " + r + " missing right after it was written");
        }
      }
      t[SEG_R] = System.nanoTime() - t0;
      t0 = System.nanoTime();
      long sink = 0;
      for (int r = 0; r < files; r++) {
        sink += Files.readAllBytes(raw.resolve("f" + r)).length;
      }
      t[RAW_R] = System.nanoTime() - t0;
      // the least a checked read does: read, CRC32C of the data, the data copied into floats
      t0 = System.nanoTime();
      for (int r = 0; r < files; r++) {
        sink += checkedFloats(raw.resolve("f" + r));
      }
      t[CHECK_R] = System.nanoTime() - t0;
      if (sink != 2 * bytesPerFile * files) {
        throw new IllegalStateException("raw read " + sink + " bytes");
      }
      for (int k = 0; round >= 0 && k < t.length; k++) {
        nanos[k][round] = t[k];
      }
    }
    Files2.fresh(dir);
    double[] mbs = new double[6];
    for (int k = 0; k < mbs.length; k++) {
      mbs[k] = bytesPerFile * (double) files / 1e6 / (Stats.median(nanos[k]) / 1e9);
    }
    table.row(
        c.name(),
        c.rangeSize(),
        c.fields().stream().map(Object::toString).toList(),
        files,
        bytesPerFile,
        mbs[SEG_W],
        mbs[RAW_W],
        mbs[SEG_W] / mbs[RAW_W],
        mbs[SEG_R],
        mbs[RAW_R],
        mbs[SEG_R] / mbs[RAW_R],
        mbs[SAFE_W],
        mbs[SEG_W] / mbs[SAFE_W],
        mbs[CHECK_R],
        mbs[SEG_R] / mbs[CHECK_R],
        String.format(
            "reads are from the page cache (warm); medians of %d alternating rounds after %d"
                + " warm-up rounds",
            rounds, warmup));
  }

  /** Reads {@code file}, checksums it and copies it into floats; returns its length. */
  private static long checkedFloats(Path file) throws IOException {
    byte[] bytes = Files.readAllBytes(file);
    java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
    crc.update(bytes);
    float[] values = new float[bytes.length / Float.BYTES];
    ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(values);
    sinkBits = crc.getValue() + Float.floatToRawIntBits(values[values.length / 2]);
    return bytes.length;
  }

  private static Block filled(CacheSpec spec, int range, SplittableRandom random) {
    Block block = Block.empty(spec, range);
    float[][] values = new float[spec.fields().size()][];
    for (long i = block.start(); i < block.start() + block.length(); i++) {
      for (int f = 0; f < values.length; f++) {
        values[f] = new float[spec.fields().get(f).width()];
        for (int k = 0; k < values[f].length; k++) {
          values[f][k] = (float) (-50 * random.nextDouble());
        }
      }
      block.put(i, values);
    }
    return block;
  }
}
