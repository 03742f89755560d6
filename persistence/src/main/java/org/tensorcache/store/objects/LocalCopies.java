package org.tensorcache.store.objects;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.tensorcache.store.io.AtomicFiles;
import org.tensorcache.store.segment.SegmentStore;

/**
 * The local directory of verified copies of one cache's segment objects, named like a segment
 * directory ({@code range-000042.safetensors}). A copy is downloaded into a temporary file,
 * checked, then renamed into place, so a name never shows a partial download. Copies are a cache,
 * not the durable place: they are not fsynced, and one torn by a power cut fails its checks at next
 * use and is downloaded again.
 */
final class LocalCopies {
  private static final Logger log = LoggerFactory.getLogger(LocalCopies.class);

  private final Path dir;

  private LocalCopies(Path dir) {
    this.dir = dir;
  }

  /** Opens (creating if needed) {@code dir}, deleting what interrupted downloads left there. */
  static LocalCopies open(Path dir) throws IOException {
    Files.createDirectories(dir);
    LocalCopies copies = new LocalCopies(dir);
    copies.deleteTemporaries();
    return copies;
  }

  /** Deletes what interrupted downloads and uploads left here; returns how many files. */
  int deleteTemporaries() throws IOException {
    int deleted = AtomicFiles.deleteTemporaries(dir);
    if (deleted > 0) {
      log.info("Deleted {} temporary files of interrupted transfers in {}", deleted, dir);
    }
    return deleted;
  }

  Path dir() {
    return dir;
  }

  /** Where range {@code range}'s verified copy is, whether or not there is one. */
  Path pathOf(int range) {
    return dir.resolve(SegmentStore.fileName(range));
  }

  /** A fresh temporary file name beside the copies (the file is not created). */
  Path newTemporary(int range) {
    return dir.resolve(
        AtomicFiles.TEMP_PREFIX
            + SegmentStore.fileName(range)
            + "-"
            + Long.toHexString(ThreadLocalRandom.current().nextLong()));
  }

  /**
   * Makes the checked file {@code temporary} range {@code range}'s copy, replacing any other in one
   * rename: a reader that holds the old one keeps it, a new one sees the new file.
   */
  void adopt(Path temporary, int range) throws IOException {
    Files.move(
        temporary,
        pathOf(range),
        StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
  }
}
