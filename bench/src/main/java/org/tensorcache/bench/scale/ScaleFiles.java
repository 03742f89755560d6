package org.tensorcache.bench.scale;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Scratch directories of the scale benchmark. */
final class ScaleFiles {
  private ScaleFiles() {}

  /** An empty directory at {@code dir}, whatever was there before. */
  static Path fresh(Path dir) throws IOException {
    if (Files.exists(dir)) {
      try (Stream<Path> paths = Files.walk(dir)) {
        for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
          Files.delete(p);
        }
      }
    }
    return Files.createDirectories(dir);
  }
}
