package org.tensorcache.cli;

import java.util.concurrent.Callable;
import org.tensorcache.launch.JobOptions;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * Prints the id of the cache the job options identify, as {@code fill} derives it, from file
 * digests and settings: no model loaded, nothing written, for a trainer's {@code --tensorcache
 * HOST:PORT/$(tensorcache cache-id ...)}.
 */
@Command(
    name = "cache-id",
    mixinStandardHelpOptions = true,
    description = {
      "Print the id of the cache these options identify (the one fill fills), and nothing else;"
          + " no model loaded, nothing written.",
      "With the built-in model, fill, node or demo must have made it and its synthetic data set."
    })
final class CacheIdCommand implements Callable<Integer> {
  @Mixin JobOptions job;

  @Override
  public Integer call() throws Exception {
    System.out.println(job.identify().cacheId());
    return 0;
  }
}
