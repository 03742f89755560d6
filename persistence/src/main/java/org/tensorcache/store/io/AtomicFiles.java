package org.tensorcache.store.io;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Replaces files so that a crash leaves either the old or the new content, never a mix: write a
 * temporary file in the same directory, rename it over the target, and return only once the file
 * and the directory are durable. Readers never see a partial file: the name appears once the whole
 * content is written.
 */
public final class AtomicFiles {
  /** Prefix of temporary files; a leftover one is an interrupted write and may be deleted. */
  public static final String TEMP_PREFIX = ".tmp-";

  /** Writes a file's content through a channel. */
  @FunctionalInterface
  public interface ContentWriter {
    /** Writes the whole content; positional writes are allowed. */
    void writeTo(FileChannel channel) throws IOException;
  }

  private AtomicFiles() {}

  /**
   * Atomically replaces (or creates) {@code target} with what {@code content} writes.
   *
   * <p>A new file is renamed into place before its one fsync: on a journaling file system that one
   * commit carries the data, the new name and the rename, and the directory fsync after it finds
   * nothing left to write (where it does, it writes it). Until both return, the caller has not been
   * told the file is durable, and a file torn by a power cut in between is one whose checks fail on
   * load. A file that replaces an existing one is fsynced before the rename, so that the old
   * content survives any crash until the new one is durable.
   */
  public static void write(Path target, ContentWriter content) throws IOException {
    Path dir = target.toAbsolutePath().getParent();
    Path tmp =
        dir.resolve(
            TEMP_PREFIX
                + target.getFileName()
                + "-"
                + Long.toHexString(ThreadLocalRandom.current().nextLong()));
    boolean replacing = Files.exists(target);
    try (FileChannel ch =
        FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      try {
        content.writeTo(ch);
        if (replacing) {
          ch.force(true);
        }
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
      } catch (IOException | RuntimeException | Error e) {
        Files.deleteIfExists(tmp);
        throw e;
      }
      if (!replacing) {
        ch.force(true); // this file's inode, whatever another writer renames over the name since
      }
    }
    fsyncDirectory(dir);
  }

  /** Makes a directory's entries (a rename, a deletion) durable. */
  public static void fsyncDirectory(Path dir) throws IOException {
    try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
      ch.force(true);
    }
  }

  /** Deletes the leftover temporary files in {@code dir}; returns how many there were. */
  public static int deleteTemporaries(Path dir) throws IOException {
    int deleted = 0;
    try (DirectoryStream<Path> temps = Files.newDirectoryStream(dir, TEMP_PREFIX + "*")) {
      for (Path p : temps) {
        if (Files.isRegularFile(p) && Files.deleteIfExists(p)) {
          deleted++;
        }
      }
    }
    if (deleted > 0) {
      fsyncDirectory(dir);
    }
    return deleted;
  }
}
