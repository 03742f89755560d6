package org.tensorcache.cli;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import org.tensorcache.launch.CacheIdentity;
import org.tensorcache.launch.JobOptions;
import org.tensorcache.launch.SegmentPlace;
import org.tensorcache.store.segment.SegmentCodec;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Writes the job's filled cache as one safetensors file from its segments, with the inputs it was
 * filled from: no cluster, no model loaded, nothing computed. The cache is found by its id, which
 * the same options give as they give {@code fill}'s: from file digests and settings.
 */
@Command(
    name = "export",
    mixinStandardHelpOptions = true,
    description = {
      "Write the job's filled cache from its segments as one safetensors file, with the inputs it"
          + " was filled from; no cluster, no model loaded, nothing computed.",
      "Give the options that identify the cache, as the fill was given them. Refused, writing"
          + " nothing, while a range is not filled."
    })
final class ExportCommand implements Callable<Integer> {
  @Mixin JobOptions job;

  @Option(
      names = "--out",
      paramLabel = "FILE",
      description =
          "Where to write the export (default: <data-dir>/<cache-id>/"
              + SegmentExport.FILE_NAME
              + ").")
  Path out;

  @Override
  public Integer call() throws Exception {
    CacheIdentity id = job.identify();
    SegmentPlace place = job.segmentPlace();
    Path file = out != null ? out : SegmentExport.defaultFile(id.cacheDir());
    // verified copies of objects go where a node keeps them when it has, else nowhere to stay
    Path copies = id.cacheDir().resolve("segments");
    Path scratch =
        place.isObjectStorage() && !Files.isDirectory(copies)
            ? Files.createTempDirectory("tensorcache-export-")
            : null;
    long bytes;
    try {
      Path at = scratch != null ? scratch : copies;
      bytes =
          id.spec().perToken()
              ? SegmentExport.writeRows(id, place.segments(SegmentCodec.ROWS, id, at), file)
              : SegmentExport.write(id, place.segments(id, at), file);
    } finally {
      if (scratch != null) {
        deleteTree(scratch);
      }
    }
    System.out.printf(
        "exported %s to %s: %d examples, %d fields, %d bytes%n",
        id.cacheId(), file, id.spec().n(), id.spec().fields().size(), bytes);
    return 0;
  }

  private static void deleteTree(Path dir) throws IOException {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
