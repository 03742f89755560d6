package org.tensorcache.chaostests;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A small tmpfs mounted on a directory the nodes write to, so that a filler file can make it full
 * for real: every write there then fails with ENOSPC, as on a full disk, until the filler goes.
 * Unmounted by {@link #close()} or, failing that, by a JVM shutdown hook.
 */
final class FullDisk implements AutoCloseable {
  private static final String FILLER = "filler";

  private final Path dir;
  private final Thread hook;
  private boolean mounted;

  private FullDisk(Path dir) {
    this.dir = dir;
    this.hook = new Thread(this::unmount, "chaos-unmount");
  }

  /**
   * Why a tmpfs cannot be mounted here (not root, no CAP_SYS_ADMIN, no {@code mount}), or null when
   * it can: found by mounting and unmounting one on a scratch directory.
   */
  static String unavailable(Path scratch) {
    try {
      Files.createDirectories(scratch);
      String out =
          run(List.of("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", scratch.toString()));
      if (out != null) {
        return "mount -t tmpfs not permitted here (needs root with CAP_SYS_ADMIN): " + out;
      }
      String un = run(List.of("umount", scratch.toString()));
      return un == null ? null : "umount of a test tmpfs failed: " + un;
    } catch (IOException e) {
      return "cannot run mount: " + e.getMessage();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "interrupted while trying mount";
    }
  }

  /** Mounts a tmpfs of {@code bytes} on {@code dir} (created, and expected empty). */
  static FullDisk mount(Path dir, long bytes) throws IOException, InterruptedException {
    Files.createDirectories(dir);
    FullDisk disk = new FullDisk(dir);
    Runtime.getRuntime().addShutdownHook(disk.hook);
    String out =
        run(List.of("mount", "-t", "tmpfs", "-o", "size=" + bytes, "tmpfs", dir.toString()));
    if (out != null) {
      disk.close();
      throw new IOException("mount -t tmpfs on " + dir + " failed: " + out);
    }
    disk.mounted = true;
    return disk;
  }

  /** Writes the filler until the file system is full; its size in bytes. */
  long fill() throws IOException {
    Path filler = dir.resolve(FILLER);
    byte[] chunk = new byte[4096];
    long written = 0;
    try (OutputStream out = Files.newOutputStream(filler)) {
      while (true) {
        out.write(chunk);
        written += chunk.length;
      }
    } catch (IOException full) {
      // the JDK gives a full disk no type of its own: what tells it apart is the space left
      if (Files.getFileStore(dir).getUsableSpace() >= chunk.length) {
        throw full;
      }
    }
    // the last partial block: single bytes until none fit
    try (OutputStream out =
        Files.newOutputStream(filler, java.nio.file.StandardOpenOption.APPEND)) {
      while (true) {
        out.write(0);
        out.flush();
        written++;
      }
    } catch (IOException full) {
      // full
    }
    return written;
  }

  /** Deletes the filler: space is back. */
  void free() throws IOException {
    Files.deleteIfExists(dir.resolve(FILLER));
  }

  /** The filler's name, which no segment check may take for a segment. */
  static boolean isFiller(Path file) {
    return file.getFileName().toString().equals(FILLER);
  }

  /** Unmounts (lazily if busy), whatever is still written there. */
  @Override
  public void close() {
    unmount();
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException e) {
      // the JVM is already shutting down: the hook runs
    }
  }

  private synchronized void unmount() {
    if (!mounted) {
      return;
    }
    try {
      if (run(List.of("umount", dir.toString())) != null) {
        run(List.of("umount", "-l", dir.toString())); // a node still has a file open there
      }
      mounted = false;
    } catch (IOException | InterruptedException e) {
      // nothing more to try; the mount goes with the machine
    }
  }

  /** Runs a command; null when it exits 0, else its output (or why it did not end). */
  private static String run(List<String> command) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      return String.join(" ", command) + " did not end within 30 s";
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    return p.exitValue() == 0 ? null : "exit " + p.exitValue() + ": " + out;
  }
}
