package org.tensorcache.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.tensorcache.bench.byo.ByoBench;
import org.tensorcache.bench.distill.FillBench;
import org.tensorcache.bench.distill.StorageBench;
import org.tensorcache.bench.micro.MicroBench;
import org.tensorcache.bench.objects.ObjectStoreBench;
import org.tensorcache.bench.remote.RemoteBench;
import org.tensorcache.bench.report.Results;
import org.tensorcache.bench.scale.ScaleBench;
import org.tensorcache.bench.security.SecurityBench;
import org.tensorcache.testing.S3ProxyServer;

/** The benchmark parts, in the order a full run takes them. */
final class Parts {
  private Parts() {}

  // the cluster part runs before the 10-million-example parts: after them, the model ran at less
  // than half its speed
  static final List<Part> ALL =
      List.of(
          Part.of(
              "runner",
              "reference runner (chosen_logp + rejected_logp), examples/s",
              r -> write(r, "foundation", Map.of("runner", RunnerBench.run(r.work(), r.size())))),
          Part.of(
              "segments",
              "segments against raw I/O of the same bytes",
              r ->
                  write(r, "foundation", Map.of("segments", SegmentBench.run(r.work(), r.size())))),
          Part.of(
              "cluster",
              "embedded cluster next to its references",
              r -> write(r, "cluster", Map.of("cluster", ClusterBench.run(r.work(), r.size())))),
          Part.of(
              "byo",
              "bring your own model: TensorCache's fill next to TRL's own precompute and a bare"
                  + " DJL loop",
              r -> ByoBench.run(r.work(), r.resultsDir(), r.size())),
          Part.of(
              "micro",
              "JMH micro benchmarks: merge, segment codec, reply serialization",
              r -> MicroBench.run(r.resultsDir(), r.size())),
          new Part(
              "remote",
              "remote lookups (no replica) next to Redis MGET",
              () ->
                  Part.onPath("redis-server")
                      ? Optional.empty()
                      : Optional.of("no redis-server on the PATH (Debian: apt-get install redis)"),
              r -> RemoteBench.run(r.work(), r.resultsDir(), r.size())),
          Part.of(
              "tiers",
              "memory tiers: a cache ten times the node's budget, in trainer and random order",
              r -> write(r, "tiers", TiersBench.run(r.work(), r.resultsDir(), r.size()))),
          Part.of(
              "scale",
              "memory per cached float, and how costs grow with N and nodes",
              r -> ScaleBench.run(r.work(), r.resultsDir(), r.size())),
          new Part(
              "objects",
              "segments in object storage (S3Proxy on loopback) next to a local directory and"
                  + " plain objects",
              () ->
                  S3ProxyServer.findJar().isPresent()
                      ? Optional.empty()
                      : Optional.of("no S3Proxy jar (mvn -B test -pl persistence fetches it)"),
              r -> ObjectStoreBench.run(r.work(), r.resultsDir(), r.size())),
          Part.of(
              "distill",
              "a distillation teacher's top-K per token: bytes per token and the compact form's"
                  + " error, next to DistillKit and plain int32 + float32; the teacher's fill next"
                  + " to an eager PyTorch teacher",
              r ->
                  write(
                      r,
                      "distill",
                      Map.of(
                          "storage",
                          StorageBench.run(r.size()),
                          "fill",
                          FillBench.run(r.work(), r.size())))),
          Part.of(
              "security",
              "TLS next to plain TCP: lookups through the lookup port, a cluster fill over Artery",
              r -> SecurityBench.run(r.work(), r.resultsDir(), r.size())));

  static List<String> names() {
    return ALL.stream().map(Part::name).toList();
  }

  /**
   * Writes a part's figures into {@code benchmark}.json beside {@code r.out()} (foundation: it).
   */
  private static void write(Part.Run r, String benchmark, Map<String, ?> figures)
      throws IOException {
    Path json =
        benchmark.equals("foundation") ? r.out() : r.out().resolveSibling(benchmark + ".json");
    Results.merge(json, benchmark, Results.header(r.size().label()), figures);
  }
}
