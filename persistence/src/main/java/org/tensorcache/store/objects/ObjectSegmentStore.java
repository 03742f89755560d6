package org.tensorcache.store.objects;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.store.segment.SegmentCodec;
import org.tensorcache.store.segment.SegmentRejectedException;
import org.tensorcache.store.segment.SegmentStore;
import org.tensorcache.store.segment.Segments;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * One cache's segments in object storage, one object per range under the cache's location ({@code
 * s3://bucket/prefix/range-000042.safetensors}), in the same format as a segment file.
 *
 * <p>Each object is created once, with {@code If-None-Match: *}, so two nodes that persist the same
 * range cannot overwrite each other. A create that finds an object there (a racing writer, or this
 * write's own earlier try whose reply was lost) reads it back and accepts it only when it is a
 * valid segment with the very bytes being written; anything else is reported with {@link
 * SegmentExistsException} and left alone. Reads download to a temporary file and check it like a
 * segment file, so a truncated, corrupt or foreign object is rejected, never served. Requests that
 * fail with transient errors are tried again for the storage's retry window.
 *
 * @param <V> what one range's values are, as {@code codec} writes them
 */
public final class ObjectSegmentStore<V> implements Segments<V> {
  private static final Logger log = LoggerFactory.getLogger(ObjectSegmentStore.class);
  private static final Pattern NAME = Pattern.compile("range-(\\d{6,10})\\.safetensors");

  /** How a create ended. */
  public enum Created {
    /** This write created the object. */
    CREATED,
    /** The object was there already, holding the same bytes (a racing writer, or a retry). */
    ALREADY_THERE
  }

  private final SegmentCodec<V> codec;
  private final ObjectStorage storage;
  private final ObjectLocation location;
  private final LocalCopies copies;
  private final CacheSpec spec;
  private final Fingerprint fingerprint;
  private final ObjectRequests requests;
  private final int listPageSize;

  private ObjectSegmentStore(
      SegmentCodec<V> codec,
      ObjectStorage storage,
      ObjectLocation location,
      LocalCopies copies,
      CacheSpec spec,
      Fingerprint fingerprint) {
    this.codec = codec;
    this.storage = storage;
    this.location = location;
    this.copies = copies;
    this.spec = spec;
    this.fingerprint = fingerprint;
    this.requests = new ObjectRequests(storage, location.bucket());
    this.listPageSize = storage.settings().listPageSize();
  }

  static <V> ObjectSegmentStore<V> open(
      SegmentCodec<V> codec,
      ObjectStorage storage,
      ObjectLocation location,
      Path localDir,
      CacheSpec spec,
      Fingerprint fingerprint)
      throws IOException {
    fingerprint.checkBelongsTo(spec);
    codec.checkSpec(spec);
    return new ObjectSegmentStore<>(
        codec, storage, location, LocalCopies.open(localDir), spec, fingerprint);
  }

  /** Where the segment objects are. */
  public ObjectLocation location() {
    return location;
  }

  /** The directory of verified local copies. */
  public Path localDirectory() {
    return copies.dir();
  }

  /** The key of range {@code range}'s object. */
  public String keyOf(int range) {
    return location.key(SegmentStore.fileName(range));
  }

  @Override
  public String locationOf(int range) {
    return location.uriOf(SegmentStore.fileName(range));
  }

  /**
   * Creates the object of the range of {@code values}. An object already there that is not a valid
   * segment of the range (truncated, corrupt, foreign: never served, so its range was computed
   * again) is deleted and the create tried once more; one holding other valid values is reported
   * ({@link SegmentExistsException}) and left as it is.
   */
  @Override
  public void write(V values) throws IOException {
    try {
      create(values);
    } catch (SegmentExistsException e) {
      if (e.rejection().isEmpty()) {
        throw e;
      }
      log.warn("replacing {}: {}", e.uri(), e.rejection().get().getMessage());
      // a racing writer may have replaced it already: its bytes equal ours, and creating again
      // after this delete writes the same bytes back
      requests.delete(keyOf(codec.range(values)), e.uri());
      create(values);
    }
  }

  /** The store's connection, for health checks. */
  public ObjectStorage storage() {
    return storage;
  }

  @Override
  public Optional<Path> presentLocally(int range) {
    Path copy = copies.pathOf(range);
    return Files.isRegularFile(copy) ? Optional.of(copy) : Optional.empty();
  }

  @Override
  public int deleteTemporaries() throws IOException {
    return copies.deleteTemporaries();
  }

  @Override
  public boolean isRemote() {
    return true;
  }

  /**
   * Creates the object of the range of {@code values}; an object already there is accepted when it
   * holds the same bytes ({@link Created#ALREADY_THERE}) and reported otherwise ({@link
   * SegmentExistsException}). The written bytes become the range's local copy.
   */
  public Created create(V values) throws IOException {
    SegmentStore.checkSpec(codec, values, spec);
    int range = codec.range(values);
    String uri = locationOf(range);
    Path staged = copies.newTemporary(range);
    try {
      try (FileChannel ch =
          FileChannel.open(staged, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
        codec.writeTo(ch, values, fingerprint);
      }
      // an object deleted between our create's 412 and the read back: create again, a few times
      for (int round = 1; ; round++) {
        if (requests.createIfAbsent(keyOf(range), staged, uri)) {
          copies.adopt(staged, range);
          return Created.CREATED;
        }
        Path existing = copies.newTemporary(range);
        try {
          if (requests.download(keyOf(range), existing, uri)) {
            confirmSame(values, staged, existing, uri);
            copies.adopt(existing, range);
            log.debug("{} was there already with the same bytes", uri);
            return Created.ALREADY_THERE;
          }
        } finally {
          Files.deleteIfExists(existing);
        }
        if (round == 3) {
          throw new ObjectStorageException(
              uri + " was reported to exist and then not found, " + round + " times", null);
        }
      }
    } finally {
      Files.deleteIfExists(staged);
    }
  }

  /** Throws unless {@code existing} is a valid segment of the range with {@code staged}'s bytes. */
  private void confirmSame(V values, Path staged, Path existing, String uri) throws IOException {
    V found;
    try {
      found = codec.read(existing, spec, fingerprint, codec.range(values));
    } catch (SegmentRejectedException e) {
      throw SegmentExistsException.damaged(uri, e.namedAs(uri));
    }
    long difference = Files.mismatch(staged, existing);
    if (difference != -1) {
      throw SegmentExistsException.different(
          uri,
          codec.range(values),
          found,
          codec.presentCount(found),
          codec.presentCount(values),
          difference);
    }
  }

  @Override
  public Optional<V> read(int range) throws IOException {
    spec.rangeLength(range); // throws, naming the range, when it is outside the cache
    String uri = locationOf(range);
    Path temporary = copies.newTemporary(range);
    try {
      if (!requests.download(keyOf(range), temporary, uri)) {
        return Optional.empty();
      }
      V values;
      try {
        values = codec.read(temporary, spec, fingerprint, range);
      } catch (SegmentRejectedException e) {
        throw e.namedAs(uri);
      }
      copies.adopt(temporary, range); // checked: a free local copy
      return Optional.of(values);
    } finally {
      Files.deleteIfExists(temporary);
    }
  }

  @Override
  public SortedSet<Integer> persistedRanges() throws IOException {
    SortedSet<Integer> ranges = new TreeSet<>();
    requests.list(
        location.key("range-"),
        listPageSize,
        location.toString(),
        key -> {
          String name = key.substring(location.prefix().length());
          Matcher m = NAME.matcher(name);
          if (m.matches()) {
            long r = Long.parseLong(m.group(1));
            if (r < spec.rangeCount() && SegmentStore.fileName((int) r).equals(name)) {
              ranges.add((int) r);
            }
          }
        });
    return ranges;
  }

  /**
   * The verified local copy of range {@code range}'s object, downloaded when there is none or when
   * the one there fails its checks (it is then replaced in one rename); empty when the range has no
   * object. A copy is checked each time it is handed out (one pass over the file, which also warms
   * the page cache for the caller's mapping).
   */
  @Override
  public Optional<Path> localCopy(int range) throws IOException {
    spec.rangeLength(range); // throws, naming the range, when it is outside the cache
    Path copy = copies.pathOf(range);
    if (Files.isRegularFile(copy)) {
      try {
        verify(copy, range);
        return Optional.of(copy);
      } catch (SegmentRejectedException e) {
        log.warn("local copy {} failed its checks, downloading it again: {}", copy, e.getMessage());
      }
    }
    String uri = locationOf(range);
    Path temporary = copies.newTemporary(range);
    try {
      if (!requests.download(keyOf(range), temporary, uri)) {
        return Optional.empty();
      }
      try {
        verify(temporary, range);
      } catch (SegmentRejectedException e) {
        throw e.namedAs(uri);
      }
      copies.adopt(temporary, range);
      return Optional.of(copy);
    } finally {
      Files.deleteIfExists(temporary);
    }
  }

  /** Every check of a read of the segment. */
  private void verify(Path file, int range) throws IOException {
    codec.read(file, spec, fingerprint, range);
  }
}
