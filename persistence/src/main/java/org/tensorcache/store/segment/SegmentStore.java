package org.tensorcache.store.segment;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.io.AtomicFiles;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * The directory of one cache's segments, one file per range ({@code range-000042.safetensors}).
 * Writes replace a range's file atomically; reads check it strictly and never modify it.
 *
 * @param <V> what one range's values are, as {@code codec} writes them
 */
public final class SegmentStore<V> implements Segments<V> {
  private static final Logger log = LoggerFactory.getLogger(SegmentStore.class);
  private static final Pattern FILE = Pattern.compile("range-(\\d{6,10})\\.safetensors");

  private final SegmentCodec<V> codec;
  private final Path dir;
  private final CacheSpec spec;
  private final Fingerprint fingerprint;

  private SegmentStore(SegmentCodec<V> codec, Path dir, CacheSpec spec, Fingerprint fingerprint) {
    this.codec = codec;
    this.dir = dir;
    this.spec = spec;
    this.fingerprint = fingerprint;
  }

  /**
   * Opens (creating if needed) the segment directory {@code dir} of the cache that {@code
   * fingerprint} identifies, deleting temporary files that an interrupted write left behind.
   */
  public static SegmentStore<Block> open(Path dir, CacheSpec spec, Fingerprint fingerprint)
      throws IOException {
    return open(SegmentCodec.BLOCKS, dir, spec, fingerprint);
  }

  /** Like {@link #open(Path, CacheSpec, Fingerprint)}, of segments that {@code codec} writes. */
  public static <V> SegmentStore<V> open(
      SegmentCodec<V> codec, Path dir, CacheSpec spec, Fingerprint fingerprint) throws IOException {
    SegmentStore<V> store = at(codec, dir, spec, fingerprint);
    Files.createDirectories(dir);
    store.deleteTemporaries();
    return store;
  }

  /**
   * The segment directory {@code dir} of the cache that {@code fingerprint} identifies, touching
   * nothing on disk: the directory is created by the first write, and one that does not exist has
   * no segments.
   */
  public static SegmentStore<Block> at(Path dir, CacheSpec spec, Fingerprint fingerprint) {
    return at(SegmentCodec.BLOCKS, dir, spec, fingerprint);
  }

  /** Like {@link #at(Path, CacheSpec, Fingerprint)}, of segments that {@code codec} writes. */
  public static <V> SegmentStore<V> at(
      SegmentCodec<V> codec, Path dir, CacheSpec spec, Fingerprint fingerprint) {
    codec.checkSpec(spec);
    if (!spec.name().equals(fingerprint.cacheName())) {
      throw new IllegalArgumentException(
          "fingerprint of cache '"
              + fingerprint.cacheName()
              + "' opened with the spec of cache '"
              + spec.name()
              + "', expected the same name");
    }
    return new SegmentStore<>(codec, dir, spec, fingerprint);
  }

  @Override
  public int deleteTemporaries() throws IOException {
    if (!Files.isDirectory(dir)) {
      return 0;
    }
    int deleted = AtomicFiles.deleteTemporaries(dir);
    if (deleted > 0) {
      log.info("Deleted {} temporary files of interrupted writes in {}", deleted, dir);
    }
    return deleted;
  }

  /** The file name of range {@code range}'s segment. */
  public static String fileName(int range) {
    return String.format("range-%06d.safetensors", range);
  }

  /** The directory. */
  public Path directory() {
    return dir;
  }

  /** The path of range {@code range}'s segment, whether or not it exists. */
  public Path pathOf(int range) {
    return dir.resolve(fileName(range));
  }

  @Override
  public String locationOf(int range) {
    return pathOf(range).toString();
  }

  /** Atomically replaces the segment of the range of {@code values} with them. */
  @Override
  public void write(V values) throws IOException {
    checkSpec(codec, values, spec);
    Files.createDirectories(dir);
    AtomicFiles.write(pathOf(codec.range(values)), ch -> codec.writeTo(ch, values, fingerprint));
  }

  /**
   * The values persisted for range {@code range}, or empty when there is none; throws {@link
   * SegmentRejectedException} when the file fails a check.
   */
  @Override
  public Optional<V> read(int range) throws IOException {
    spec.rangeLength(range); // throws, naming the range, when it is outside the cache
    try {
      return Optional.of(codec.read(pathOf(range), spec, fingerprint, range));
    } catch (NoSuchFileException e) {
      return Optional.empty(); // one open, not a check for the file and then an open
    }
  }

  /** The ranges that have a segment file, by name only; the files are not checked. */
  @Override
  public SortedSet<Integer> persistedRanges() throws IOException {
    SortedSet<Integer> ranges = new TreeSet<>();
    if (!Files.isDirectory(dir)) {
      return ranges;
    }
    try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "range-*.safetensors")) {
      for (Path p : files) {
        Matcher m = FILE.matcher(p.getFileName().toString());
        if (m.matches()) {
          long r = Long.parseLong(m.group(1));
          if (r < spec.rangeCount() && fileName((int) r).equals(p.getFileName().toString())) {
            ranges.add((int) r);
          }
        }
      }
    }
    return ranges;
  }

  @Override
  public Optional<Path> presentLocally(int range) {
    return localCopy(range);
  }

  @Override
  public boolean isRemote() {
    return false;
  }

  /** The segment file itself, when there is one: the directory is already local. */
  @Override
  public Optional<Path> localCopy(int range) {
    spec.rangeLength(range); // throws, naming the range, when it is outside the cache
    Path file = pathOf(range);
    return Files.isRegularFile(file) ? Optional.of(file) : Optional.empty();
  }

  /** Throws unless {@code values} belong to the cache of {@code spec}, naming both. */
  public static <V> void checkSpec(SegmentCodec<V> codec, V values, CacheSpec spec) {
    if (!codec.spec(values).equals(spec)) {
      throw new IllegalArgumentException(
          "values of " + codec.spec(values) + " written to the store of " + spec + ", expected it");
    }
  }
}
