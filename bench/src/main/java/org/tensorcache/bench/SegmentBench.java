package org.tensorcache.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.tensorcache.bench.fixture.RunSize;
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
    List<Map<String, Object>> rows = new ArrayList<>();
    System.out.printf(
        "%-12s %6s %10s %11s %11s %7s %11s %11s %7s%n",
        "case",
        "files",
        "bytes/file",
        "seg_w MB/s",
        "raw_w MB/s",
        "w ratio",
        "seg_r MB/s",
        "raw_r MB/s",
        "r ratio",
        "safe_w MB/s",
        "w/safe",
        "chk_r MB/s",
        "r/chk");
    System.out.println(
        "  safe_w: the same bytes written crash-safely (temp file, rename, fsync, directory fsync);"
            + " chk_r: read raw, CRC32C, copied into floats: the least a safe write and a checked"
            + " read do");
    for (Case c : CASES) {
      int files = size.pick(c.files(), Math.max(2, c.files() / 4), 2);
      rows.add(run(work.resolve(c.name()), c, files, size.pick(2, 2, 0), size.pick(5, 5, 1)));
    }
    return rows;
  }

  private static Map<String, Object> run(Path dir, Case c, int files, int warmup, int rounds)
      throws IOException {
    CacheSpec spec =
        new CacheSpec("bench", (long) files * c.rangeSize(), c.fields(), c.rangeSize());
    Fingerprint fp = Fingerprint.of(new FingerprintInputs("bench", "1", "w", "d", Map.of(), spec));
    List<Block> blocks = new ArrayList<>();
    SplittableRandom random = new SplittableRandom(1);
    for (int r = 0; r < files; r++) {
      blocks.add(filled(spec, r, random));
    }
    double[] segW = new double[rounds + warmup];
    double[] rawW = new double[rounds + warmup];
    double[] segR = new double[rounds + warmup];
    double[] rawR = new double[rounds + warmup];
    double[] safeW = new double[rounds + warmup];
    double[] checkR = new double[rounds + warmup];
    long bytesPerFile = 0;
    // the first rounds run before the JIT has compiled the codecs: measured, then dropped
    for (int round = 0; round < rounds + warmup; round++) {
      clean(dir);
      SegmentStore store = SegmentStore.open(dir.resolve("segments"), spec, fp);
      long t0 = System.nanoTime();
      for (Block b : blocks) {
        store.write(b);
      }
      segW[round] = System.nanoTime() - t0;
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
      rawW[round] = System.nanoTime() - t0;
      // the least a crash-safe write does: the same bytes through the same temp/rename/fsync path
      Path safe = Files.createDirectories(dir.resolve("safe"));
      t0 = System.nanoTime();
      for (int r = 0; r < files; r++) {
        AtomicFiles.write(safe.resolve("f" + r), ch -> ch.write(ByteBuffer.wrap(bytes)));
      }
      safeW[round] = System.nanoTime() - t0;
      t0 = System.nanoTime();
      for (int r = 0; r < files; r++) {
        if (store.read(r).isEmpty()) {
          throw new IllegalStateException("segment " + r + " missing right after it was written");
        }
      }
      segR[round] = System.nanoTime() - t0;
      t0 = System.nanoTime();
      long sink = 0;
      for (int r = 0; r < files; r++) {
        sink += Files.readAllBytes(raw.resolve("f" + r)).length;
      }
      rawR[round] = System.nanoTime() - t0;
      // the least a checked read does: read, CRC32C of the data, the data copied into floats
      t0 = System.nanoTime();
      for (int r = 0; r < files; r++) {
        sink += checkedFloats(raw.resolve("f" + r));
      }
      checkR[round] = System.nanoTime() - t0;
      if (sink != 2 * bytesPerFile * files) {
        throw new IllegalStateException("raw read " + sink + " bytes");
      }
    }
    clean(dir);
    segW = Arrays.copyOfRange(segW, warmup, rounds + warmup);
    rawW = Arrays.copyOfRange(rawW, warmup, rounds + warmup);
    segR = Arrays.copyOfRange(segR, warmup, rounds + warmup);
    rawR = Arrays.copyOfRange(rawR, warmup, rounds + warmup);
    safeW = Arrays.copyOfRange(safeW, warmup, rounds + warmup);
    checkR = Arrays.copyOfRange(checkR, warmup, rounds + warmup);
    double mb = bytesPerFile * (double) files / 1e6;
    double segWrite = mb / (median(segW) / 1e9);
    double rawWrite = mb / (median(rawW) / 1e9);
    double segRead = mb / (median(segR) / 1e9);
    double rawRead = mb / (median(rawR) / 1e9);
    double safeWrite = mb / (median(safeW) / 1e9);
    double checkRead = mb / (median(checkR) / 1e9);
    System.out.printf(
        "%-12s %6d %10d %11.1f %11.1f %7.2f %11.1f %11.1f %7.2f | %11.1f %7.2f %11.1f %7.2f%n",
        c.name(),
        files,
        bytesPerFile,
        segWrite,
        rawWrite,
        segWrite / rawWrite,
        segRead,
        rawRead,
        segRead / rawRead,
        safeWrite,
        segWrite / safeWrite,
        checkRead,
        segRead / checkRead);
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("case", c.name());
    row.put("range_size", c.rangeSize());
    row.put("fields", c.fields().stream().map(Object::toString).toList());
    row.put("files", files);
    row.put("bytes_per_file", bytesPerFile);
    row.put("segment_write_mb_s", round2(segWrite));
    row.put("raw_write_fsync_mb_s", round2(rawWrite));
    row.put("write_ratio", round2(segWrite / rawWrite));
    row.put("segment_read_mb_s", round2(segRead));
    row.put("raw_read_mb_s", round2(rawRead));
    row.put("read_ratio", round2(segRead / rawRead));
    row.put("crash_safe_write_floor_mb_s", round2(safeWrite));
    row.put("write_ratio_to_floor", round2(segWrite / safeWrite));
    row.put("checked_read_floor_mb_s", round2(checkRead));
    row.put("read_ratio_to_floor", round2(segRead / checkRead));
    row.put(
        "note",
        "reads are from the page cache (warm); medians of "
            + rounds
            + " alternating rounds after "
            + warmup
            + " warm-up rounds");
    return row;
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

  private static double median(double[] xs) {
    double[] s = xs.clone();
    Arrays.sort(s);
    return s[s.length / 2];
  }

  private static double round2(double x) {
    return Math.round(x * 100) / 100.0;
  }

  private static void clean(Path dir) throws IOException {
    if (Files.exists(dir)) {
      try (Stream<Path> paths = Files.walk(dir)) {
        for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
          Files.delete(p);
        }
      }
    }
    Files.createDirectories(dir);
  }
}
