package org.tensorcache.launch;

import java.io.IOException;
import org.tensorcache.actors.cache.CacheDefinition;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * The cache a node started with the same job options registers, for programs that join a cluster
 * from their own JVM (tests, trainers): {@code definition("--data-dir", "d", "--examples",
 * "3000")}.
 */
public final class JobDefinitions {
  private JobDefinitions() {}

  @Command(name = "job")
  static final class Args {
    @Mixin JobOptions job;
    @Mixin ComputeOptions compute;
  }

  /**
   * The definition of the cache that {@code jobArgs} (the job options of {@code tensorcache node})
   * decide; makes the seeded data set and model when missing.
   */
  public static CacheDefinition definition(String... jobArgs) throws IOException {
    Args args = new Args();
    new CommandLine(args).parseArgs(jobArgs);
    return args.job.prepare(args.compute).definition();
  }
}
