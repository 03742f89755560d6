package org.tensorcache.launch;

import com.typesafe.config.ConfigFactory;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.objects.ObjectLocation;
import org.tensorcache.store.objects.ObjectStorage;
import org.tensorcache.store.objects.ObjectStoreSettings;
import org.tensorcache.store.segment.SegmentCodec;
import org.tensorcache.store.segment.SegmentStore;
import org.tensorcache.store.segment.Segments;

/**
 * Where a job's segments are kept ({@code --segments}): beside the cache in the data directory (the
 * default), under a directory of the caller's (a shared filesystem), or in S3-compatible object
 * storage. Each cache is kept under its id. Object storage is reached through one {@link
 * ObjectStorage} per process and settings, closed when the JVM exits: a node serves as long as its
 * process lives, and the client's connection pool is shared by every cache.
 */
public final class SegmentPlace {
  private static final Map<ObjectStoreSettings, ObjectStorage> OPEN = new ConcurrentHashMap<>();

  private final Path directory; // null: beside the cache, or object storage
  private final ObjectLocation objects; // null: a directory
  private final ObjectStoreSettings settings;

  private SegmentPlace(Path directory, ObjectLocation objects, ObjectStoreSettings settings) {
    this.directory = directory;
    this.objects = objects;
    this.settings = settings;
  }

  /**
   * The place {@code location} names (null: beside the cache), with {@code endpoint} and {@code
   * region} (null: from the configuration) for object storage; throws, naming the value, when one
   * is malformed or given without object storage.
   */
  public static SegmentPlace of(String location, String endpoint, String region) {
    if (location == null || !ObjectLocation.isObjectUri(location)) {
      if (endpoint != null || region != null) {
        throw new IllegalArgumentException(
            (endpoint != null ? "--s3-endpoint " + endpoint : "--s3-region " + region)
                + " given with "
                + (location == null ? "no --segments" : "--segments " + location)
                + ", expected --segments s3://BUCKET[/PREFIX]");
      }
      if (location != null && location.isBlank()) {
        throw new IllegalArgumentException(
            "--segments '' expected a directory or s3://BUCKET[/PREFIX]");
      }
      return new SegmentPlace(location == null ? null : Path.of(location), null, null);
    }
    ObjectLocation objects = ObjectLocation.parse(location);
    ObjectStoreSettings settings = ObjectStoreSettings.fromConfig(ConfigFactory.load());
    if (endpoint != null) {
      URI uri;
      try {
        uri = URI.create(endpoint);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "--s3-endpoint " + endpoint + " is not a URL, expected http(s)://host[:port]", e);
      }
      settings = settings.withEndpoint(uri);
    }
    if (region != null) {
      settings = settings.withRegion(region);
    }
    return new SegmentPlace(null, objects, settings);
  }

  /** Whether segments are kept in object storage. */
  public boolean isObjectStorage() {
    return objects != null;
  }

  /**
   * {@code cache} with its segments kept here: its {@code segmentDir} stays this node's directory
   * (of the segments, or of verified copies of the objects).
   */
  public CacheDefinition apply(CacheDefinition cache) throws IOException {
    if (objects != null) {
      ObjectStorage storage = OPEN.computeIfAbsent(settings, SegmentPlace::connect);
      Path copies = cache.segmentDir();
      return cache.withSegments(
          storage.segments(
              objects.resolve(cache.cacheId()), copies, cache.spec(), cache.fingerprint()),
          copies);
    }
    if (directory == null) {
      return cache;
    }
    Path dir = directory.resolve(cache.cacheId());
    return cache.withSegments(SegmentStore.at(dir, cache.spec(), cache.fingerprint()), dir);
  }

  /**
   * The segments of the cache {@code id} as kept here, for reading them: a directory is not
   * created; object storage keeps verified copies in {@code copies}.
   */
  public Segments<Block> segments(CacheIdentity id, Path copies) throws IOException {
    return segments(SegmentCodec.BLOCKS, id, copies);
  }

  /**
   * As {@link #segments(CacheIdentity, Path)}, of segments that {@code codec} writes (a per-token
   * cache's rows); a directory is created by the first write.
   */
  public <V> Segments<V> segments(SegmentCodec<V> codec, CacheIdentity id, Path copies)
      throws IOException {
    if (objects != null) {
      ObjectStorage storage = OPEN.computeIfAbsent(settings, SegmentPlace::connect);
      return storage.segments(
          codec, objects.resolve(id.cacheId()), copies, id.spec(), id.fingerprint());
    }
    Path dir =
        directory == null ? id.cacheDir().resolve("segments") : directory.resolve(id.cacheId());
    return SegmentStore.at(codec, dir, id.spec(), id.fingerprint());
  }

  private static ObjectStorage connect(ObjectStoreSettings settings) {
    ObjectStorage storage = ObjectStorage.open(settings);
    Runtime.getRuntime().addShutdownHook(new Thread(storage::close, "object-storage-close"));
    return storage;
  }
}
