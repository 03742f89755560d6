package org.tensorcache.bench;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;
import org.tensorcache.bench.fixture.Files2;
import org.tensorcache.bench.fixture.Rounds;
import org.tensorcache.bench.fixture.RunSize;
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

  private static final List<FieldSpec> LOGP =
      List.of(FieldSpec.scalar("chosen_logp"), FieldSpec.scalar("rejected_logp"));

  private static final List<Case> CASES =
      List.of(
          new Case("logp-1k", 1024, LOGP, 256),
          new Case("logp-64k", 65536, LOGP, 16),
          new Case("features-4k", 4096, List.of(FieldSpec.vector("features", 128)), 8));

  private static final String NOTE =
      "reads are from the page cache (warm); medians of %d alternating rounds after %d warm-up"
          + " rounds";

  /** Results of the checked read's work, kept where the JIT cannot drop them. */
  private static volatile long sinkBits;

  private SegmentBench() {}

  static List<Map<String, Object>> run(Path work, RunSize size) throws Exception {
    Table table =
        new Table(null)
            .col("case", "%-12s")
            .json("range_size")
            .json("fields")
            .col("files", "%6d")
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
      run(table, work.resolve("segments").resolve(c.name()), c, size);
    }
    List<Map<String, Object>> rows = table.print();
    System.out.println(
        "  safe_w: the same bytes written crash-safely (temp file, rename, fsync, directory fsync);"
            + " chk_r: read raw, CRC32C, copied into floats: the least a safe write and a checked"
            + " read do");
    return rows;
  }

  private static void run(Table table, Path dir, Case c, RunSize size) throws Exception {
    int files = size.pick(c.files(), Math.max(2, c.files() / 4), 2);
    int warmUp = size.pick(2, 2, 0);
    int rounds = size.pick(5, 5, 1);
    CacheSpec spec =
        new CacheSpec("bench", (long) files * c.rangeSize(), c.fields(), c.rangeSize());
    Fingerprint fp = Fingerprint.of(new FingerprintInputs("bench", "1", "w", "d", Map.of(), spec));
    List<Block> blocks = new ArrayList<>();
    SplittableRandom random = new SplittableRandom(1);
    for (int r = 0; r < files; r++) {
      blocks.add(filled(spec, r, random));
    }
    // the bytes of a segment file: what the raw and the crash-safe writes write
    SegmentStore[] store = {SegmentStore.open(Files2.fresh(dir).resolve("segments"), spec, fp)};
    store[0].write(blocks.get(0));
    byte[] bytes = Files.readAllBytes(store[0].pathOf(0));
    Path raw = dir.resolve("raw");
    Path safe = dir.resolve("safe");
    // the warm-up rounds run before the JIT has compiled the codecs; the least a crash-safe write
    // does: the same bytes through the same temp/rename/fsync path; the least a checked read does:
    // read, CRC32C of the data, the data copied into floats
    Rounds t =
        Rounds.time(
            warmUp,
            0,
            rounds,
            files,
            round -> {
              Files2.fresh(dir);
              Files.createDirectories(raw);
              Files.createDirectories(safe);
              store[0] = SegmentStore.open(dir.resolve("segments"), spec, fp);
            },
            Rounds.NOTHING,
            r -> store[0].write(blocks.get(r)),
            r -> writeFsync(raw.resolve("f" + r), bytes),
            r -> AtomicFiles.write(safe.resolve("f" + r), ch -> ch.write(ByteBuffer.wrap(bytes))),
            r -> check(store[0].read(r).isPresent(), "a segment missing right after its write"),
            r -> read(raw.resolve("f" + r), bytes.length),
            r -> checkedFloats(read(raw.resolve("f" + r), bytes.length)));
    Files2.fresh(dir);
    double[] mbs = new double[6]; // seg_w, raw_w, safe_w, seg_r, raw_r, chk_r
    for (int k = 0; k < mbs.length; k++) {
      mbs[k] = (double) bytes.length * files / 1e6 / (t.at(k, 0.5) / 1e9);
    }
    table.row(
        c.name(),
        c.rangeSize(),
        c.fields().stream().map(Object::toString).toList(),
        files,
        bytes.length,
        mbs[0],
        mbs[1],
        mbs[0] / mbs[1],
        mbs[3],
        mbs[4],
        mbs[3] / mbs[4],
        mbs[2],
        mbs[0] / mbs[2],
        mbs[5],
        mbs[3] / mbs[5],
        String.format(NOTE, rounds, warmUp));
  }

  private static void writeFsync(Path file, byte[] bytes) throws Exception {
    try (FileChannel ch =
        FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      ch.write(ByteBuffer.wrap(bytes));
      ch.force(true);
    }
  }

  private static byte[] read(Path file, int length) throws Exception {
    byte[] bytes = Files.readAllBytes(file);
    check(bytes.length == length, "raw read " + bytes.length + " bytes of " + length);
    return bytes;
  }

  private static void checkedFloats(byte[] bytes) {
    CRC32C crc = new CRC32C();
    crc.update(bytes);
    float[] values = new float[bytes.length / Float.BYTES];
    ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer().get(values);
    sinkBits = crc.getValue() + Float.floatToRawIntBits(values[values.length / 2]);
  }

  private static void check(boolean ok, String problem) {
    if (!ok) {
      throw new IllegalStateException(problem);
    }
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
