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
 * temporary file in the same directory, fsync it, rename it over the target, fsync the directory.
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

  /** Atomically replaces (or creates) {@code target} with what {@code content} writes. */
  public static void write(Path target, ContentWriter content) throws IOException {
    Path dir = target.toAbsolutePath().getParent();
    Path tmp =
        dir.resolve(
            TEMP_PREFIX
                + target.getFileName()
                + "-"
                + Long.toHexString(ThreadLocalRandom.current().nextLong()));
    try {
      try (FileChannel ch =
          FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
        content.writeTo(ch);
        ch.force(true);
      }
      Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException | RuntimeException | Error e) {
      Files.deleteIfExists(tmp);
      throw e;
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
