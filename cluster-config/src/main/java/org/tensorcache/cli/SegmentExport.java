package org.tensorcache.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.launch.CacheIdentity;
import org.tensorcache.launch.Job;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.export.CacheExport;
import org.tensorcache.store.export.RowExport;
import org.tensorcache.store.rows.RowBlock;
import org.tensorcache.store.segment.SegmentCodec;
import org.tensorcache.store.segment.SegmentRejectedException;
import org.tensorcache.store.segment.Segments;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * A filled cache written as one safetensors file ({@link CacheExport}) from its segments on disk,
 * each checked as every read checks it; nothing is computed. A cache with a range that has no
 * complete, verified segment is refused before anything is written.
 */
final class SegmentExport {
  private static final Logger log = LoggerFactory.getLogger(SegmentExport.class);

  /** The export file's name in the cache's directory. */
  static final String FILE_NAME = "export.safetensors";

  private SegmentExport() {}

  /**
   * Where a job's export goes unless told otherwise: {@code <data-dir>/<cache-id>/}{@value
   * #FILE_NAME}.
   */
  static Path defaultFile(Path cacheDir) {
    return cacheDir.resolve(FILE_NAME);
  }

  /**
   * Atomically writes the job's cache, with the inputs it was filled from, to {@code file} and
   * returns its size in bytes; throws {@link IllegalStateException} naming the ranges that are not
   * filled (no segment, a rejected one, or one with missing examples) and writes nothing then.
   */
  static long write(Job job, Path file) throws IOException {
    return write(
        job.spec(),
        job.fingerprint(),
        job.definition().segments(),
        job.definition().inputs(),
        file);
  }

  /**
   * As {@link #write(Job, Path)}, for the cache {@code id} whose segments are {@code store};
   * nothing is loaded but the segments.
   */
  static long write(CacheIdentity id, Segments<Block> store, Path file) throws IOException {
    return write(id.spec(), id.fingerprint(), store, id.inputs(), file);
  }

  /** As {@link #write(CacheIdentity, Segments, Path)}, of a per-token cache ({@link RowExport}). */
  static long writeRows(CacheIdentity id, Segments<RowBlock> store, Path file) throws IOException {
    List<RowBlock> rows = complete(id.spec(), store, SegmentCodec.ROWS);
    createParent(file);
    RowExport.write(file, id.spec(), id.fingerprint(), id.inputs(), rows);
    return Files.size(file);
  }

  private static long write(
      CacheSpec spec,
      Fingerprint fingerprint,
      Segments<Block> store,
      Map<String, String> inputs,
      Path file)
      throws IOException {
    List<Block> blocks = complete(spec, store, SegmentCodec.BLOCKS);
    createParent(file);
    CacheExport.write(file, spec, fingerprint, inputs, blocks);
    return Files.size(file);
  }

  /**
   * Every range's values, each verified and complete; else {@link IllegalStateException} naming the
   * ranges that are not filled.
   */
  private static <V> List<V> complete(CacheSpec spec, Segments<V> store, SegmentCodec<V> codec)
      throws IOException {
    List<V> ranges = new ArrayList<>(spec.rangeCount());
    List<Integer> unfilled = new ArrayList<>();
    String rejection = null;
    for (int range = 0; range < spec.rangeCount(); range++) {
      Optional<V> values;
      try {
        values = store.read(range);
      } catch (SegmentRejectedException e) {
        log.warn("segment of range {} rejected: {}", range, e.getMessage());
        rejection = rejection != null ? rejection : e.getMessage();
        values = Optional.empty();
      }
      if (values.isPresent() && codec.presentCount(values.get()) == spec.rangeLength(range)) {
        ranges.add(values.get());
      } else {
        unfilled.add(range);
      }
    }
    if (!unfilled.isEmpty()) {
      throw new IllegalStateException(
          notFilled(spec, unfilled)
              + ": run ./tensorcache fill with the same job options first"
              + (rejection == null ? "" : " (a segment was rejected: " + rejection + ")"));
    }
    return ranges;
  }

  private static void createParent(Path file) throws IOException {
    Path parent = file.toAbsolutePath().getParent();
    if (parent != null) {
      Files.createDirectories(parent);
    }
  }

  /**
   * Names ranges compactly, runs of consecutive ones as {@code first-last}, with their examples:
   * {@code ranges 3-5, 9 of 12 (examples 3072-6143, 9216-10239) are not filled}.
   */
  static String notFilled(CacheSpec spec, List<Integer> ranges) {
    StringBuilder names = new StringBuilder();
    StringBuilder examples = new StringBuilder();
    for (int i = 0; i < ranges.size(); ) {
      int first = ranges.get(i);
      int last = first;
      while (i + 1 < ranges.size() && ranges.get(i + 1) == last + 1) {
        last = ranges.get(++i);
      }
      i++;
      String sep = names.length() == 0 ? "" : ", ";
      names.append(sep).append(first == last ? "" + first : first + "-" + last);
      long from = spec.rangeStart(first);
      long to = spec.rangeStart(last) + spec.rangeLength(last) - 1;
      examples.append(sep).append(from == to ? "" + from : from + "-" + to);
    }
    boolean one = ranges.size() == 1;
    boolean oneExample = examples.indexOf("-") < 0 && examples.indexOf(",") < 0;
    return String.format(
        "%s %s of %d (%s %s) %s not filled",
        one ? "range" : "ranges",
        names,
        spec.rangeCount(),
        oneExample ? "example" : "examples",
        examples,
        one ? "is" : "are");
  }
}
