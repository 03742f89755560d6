package org.tensorcache.cli;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import org.tensorcache.launch.Job;
import org.tensorcache.launch.JobOptions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * Writes the job's filled cache as one safetensors file from its segments on disk, with the inputs
 * it was filled from: no cluster, nothing computed. The job is prepared as {@code fill} prepares it
 * (the same options make the same cache id), which loads the model: its runner decides the id.
 */
@Command(
    name = "export",
    mixinStandardHelpOptions = true,
    description = {
      "Write the job's filled cache from its segments on disk as one safetensors file,"
          + " with the inputs it was filled from; no cluster, nothing computed.",
      "Give the job options the fill was given. Refused, writing nothing, while a range is not"
          + " filled."
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
    Job prepared = job.prepare();
    Path file = out != null ? out : SegmentExport.defaultFile(prepared);
    long bytes = SegmentExport.write(prepared, file);
    System.out.printf(
        "exported %s to %s: %d examples, %d fields, %d bytes%n",
        prepared.fingerprint().cacheId(),
        file,
        prepared.spec().n(),
        prepared.spec().fields().size(),
        bytes);
    return 0;
  }
}
