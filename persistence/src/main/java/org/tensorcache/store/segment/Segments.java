package org.tensorcache.store.segment;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Optional;
import java.util.SortedSet;

/**
 * Where one cache's segments are kept, one per range: a local directory ({@link SegmentStore}) or
 * S3-compatible object storage ({@code org.tensorcache.store.objects.ObjectSegmentStore}). Every
 * read checks the segment strictly, so a truncated, corrupt or foreign one is rejected with a
 * {@link SegmentRejectedException} and never becomes a block: the caller computes the range again.
 * Implementations are safe for use by several threads.
 *
 * @param <V> what one range's values are, as the store's {@link SegmentCodec} writes them
 */
public interface Segments<V> {
  /**
   * Persists {@code values} as their range's segment; durable once this returns. A directory
   * replaces an existing segment atomically; object storage creates each segment once and accepts
   * an existing object only when it holds the same bytes (and reports any other).
   */
  void write(V values) throws IOException;

  /**
   * The values persisted for range {@code range}, or empty when there is none; throws {@link
   * SegmentRejectedException} when the segment fails a check.
   */
  Optional<V> read(int range) throws IOException;

  /** The ranges that have a segment, by name only; the segments are not checked. */
  SortedSet<Integer> persistedRanges() throws IOException;

  /**
   * A file on this machine holding range {@code range}'s segment, for readers that map it (the warm
   * tier), or empty when the range has none. A directory returns its own file; object storage
   * downloads the object once into a local cache and returns that copy, verified whenever it is
   * handed out. Either way the caller still opens it with checks, since a file can change later.
   */
  Optional<Path> localCopy(int range) throws IOException;

  /**
   * A file on this machine holding range {@code range}'s segment that is there already, found with
   * no request to a remote store (and not checked): for readers that must not wait on the network.
   */
  Optional<Path> presentLocally(int range);

  /** Whether {@link #localCopy} may have to download the segment (object storage). */
  boolean isRemote();

  /**
   * Deletes the temporary files that interrupted writes (or downloads) left on this machine;
   * returns how many. Run it when no write is under way.
   */
  int deleteTemporaries() throws IOException;

  /** Where range {@code range}'s segment is (a path or an object's URI), for messages and logs. */
  String locationOf(int range);
}
