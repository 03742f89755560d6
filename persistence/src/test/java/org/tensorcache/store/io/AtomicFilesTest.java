package org.tensorcache.store.io;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A write that fails leaves the old content (or no file), and never a temporary file. */
class AtomicFilesTest {
  @TempDir Path dir;

  @Test
  void newAndReplacedFilesHoldTheWholeContent() throws IOException {
    Path target = dir.resolve("range-000001.safetensors");
    AtomicFiles.write(target, ch -> ch.write(ByteBuffer.wrap(new byte[] {1, 2, 3})));
    assertArrayEquals(new byte[] {1, 2, 3}, Files.readAllBytes(target));
    AtomicFiles.write(target, ch -> ch.write(ByteBuffer.wrap(new byte[] {4, 5})));
    assertArrayEquals(new byte[] {4, 5}, Files.readAllBytes(target));
    assertEquals(1, entries(), "no temporary file is left");
  }

  @Test
  void aFailedWriteLeavesTheOldContentOrNoFile() throws IOException {
    Path fresh = dir.resolve("fresh");
    assertThrows(IOException.class, () -> AtomicFiles.write(fresh, ch -> failHalfway(ch)));
    assertFalse(Files.exists(fresh), "a failed first write leaves no file under the name");

    Path old = dir.resolve("old");
    AtomicFiles.write(old, ch -> ch.write(ByteBuffer.wrap(new byte[] {9, 9, 9, 9})));
    assertThrows(IOException.class, () -> AtomicFiles.write(old, ch -> failHalfway(ch)));
    assertArrayEquals(new byte[] {9, 9, 9, 9}, Files.readAllBytes(old));
    assertEquals(1, entries(), "no temporary file is left");
  }

  private static void failHalfway(java.nio.channels.FileChannel ch) throws IOException {
    ch.write(ByteBuffer.wrap(new byte[] {7, 7}));
    throw new IOException("disk full");
  }

  private long entries() throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.count();
    }
  }
}
