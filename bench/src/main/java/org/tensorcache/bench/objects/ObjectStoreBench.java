package org.tensorcache.bench.objects;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.report.Results;
import org.tensorcache.bench.report.Stats;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.objects.ObjectLocation;
import org.tensorcache.store.objects.ObjectSegmentStore;
import org.tensorcache.store.objects.ObjectStorage;
import org.tensorcache.store.objects.ObjectStoreSettings;
import org.tensorcache.store.segment.SegmentStore;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;
import org.tensorcache.store.spec.FingerprintInputs;
import org.tensorcache.testing.S3ProxyServer;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;

/**
 * Segments written and read through S3-compatible object storage (a real S3Proxy on loopback, its
 * filesystem backend on this machine's disk) next to the same segments in a local directory, and
 * next to what a user would do instead: the same bytes uploaded and downloaded as plain objects
 * with the AWS SDK (no conditional create, no checks). Alternating rounds, medians.
 */
public final class ObjectStoreBench {
  private static final String BUCKET = "bench";

  private ObjectStoreBench() {}

  /** Runs the part and writes {@code objects.json} into {@code resultsDir}. */
  public static void run(Path work, Path resultsDir, RunSize size) throws Exception {
    int files = size.pick(64, 32, 4);
    int rounds = size.pick(5, 3, 1);
    int rangeSize = 4096;
    CacheSpec spec =
        new CacheSpec(
            "bench",
            (long) files * rangeSize,
            List.of(FieldSpec.scalar("chosen_logp"), FieldSpec.scalar("rejected_logp")),
            rangeSize);
    Fingerprint fp = Fingerprint.of(new FingerprintInputs("bench", "1", "w", "d", Map.of(), spec));
    List<Block> blocks = new ArrayList<>();
    SplittableRandom random = new SplittableRandom(1);
    for (int r = 0; r < files; r++) {
      blocks.add(filled(spec, r, random));
    }
    Path dir = Files.createDirectories(work.resolve("objects"));
    double[][] t = new double[6][rounds];
    long bytes;
    try (S3ProxyServer server = S3ProxyServer.start(dir.resolve("s3proxy"));
        ObjectStorage storage =
            ObjectStorage.open(
                ObjectStoreSettings.defaults().withEndpoint(server.endpoint()),
                StaticCredentialsProvider.create(
                    AwsBasicCredentials.create(S3ProxyServer.IDENTITY, S3ProxyServer.CREDENTIAL)));
        PlainObjects plain = new PlainObjects(server.endpoint(), BUCKET)) {
      server.createBucket(BUCKET);
      Path sample = dir.resolve("sample");
      SegmentStore.open(sample, spec, fp).write(blocks.get(0));
      bytes = Files.size(sample.resolve(SegmentStore.fileName(0)));
      for (int round = 0; round < rounds; round++) {
        String tag = "r" + round;
        SegmentStore local = SegmentStore.open(dir.resolve("local-" + tag), spec, fp);
        ObjectSegmentStore objects =
            storage.segments(
                ObjectLocation.parse("s3://" + BUCKET + "/" + tag),
                dir.resolve("copies-" + tag),
                spec,
                fp);
        ObjectSegmentStore reader =
            storage.segments(
                ObjectLocation.parse("s3://" + BUCKET + "/" + tag),
                dir.resolve("reader-" + tag),
                spec,
                fp);
        t[0][round] = time(() -> forEach(blocks, local::write));
        t[1][round] = time(() -> forEach(blocks, objects::write));
        t[2][round] =
            time(() -> plain.putAll(tag, sample.resolve(SegmentStore.fileName(0)), files));
        t[3][round] = time(() -> readAll(local, files));
        t[4][round] = time(() -> readAll(reader, files));
        t[5][round] = time(() -> plain.getAll(tag, files));
      }
    }
    double mb = bytes * (double) files / 1e6;
    String[] names = {
      "local_segment_write",
      "object_segment_write",
      "plain_put_same_bytes",
      "local_segment_read",
      "object_segment_read",
      "plain_get_same_bytes"
    };
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("files", files);
    row.put("bytes_per_file", bytes);
    System.out.printf(
        "%d segments of %d bytes; MB/s (ms per segment), medians of %d rounds%n",
        files, bytes, rounds);
    for (int i = 0; i < names.length; i++) {
      double seconds = Stats.median(t[i]) / 1e9;
      double mbs = mb / seconds;
      System.out.printf("  %-22s %8.1f MB/s  (%.2f ms)%n", names[i], mbs, seconds * 1000 / files);
      row.put(names[i] + "_mb_s", Math.round(mbs * 10) / 10.0);
      row.put(names[i] + "_ms_per_segment", Math.round(seconds * 1e6 / files) / 1000.0);
    }
    row.put(
        "note",
        "object storage: S3Proxy 4.1.0 (filesystem backend) on loopback, AWS SDK for Java v2;"
            + " a segment write there is a conditional create (If-None-Match) of a checked file,"
            + " a read a download into a verified local copy; plain_*: the same bytes as plain"
            + " objects, unchecked");
    Map<String, Object> results = new LinkedHashMap<>();
    results.put("benchmark", "objects");
    results.put("when", Instant.now().toString());
    results.put("machine", Results.machine());
    results.put("size", size.label());
    results.put("objects", row);
    Results.write(resultsDir.resolve("objects.json"), results);
  }

  private interface Step {
    void run() throws IOException;
  }

  private interface Writer {
    void write(Block b) throws IOException;
  }

  private static void forEach(List<Block> blocks, Writer writer) throws IOException {
    for (Block b : blocks) {
      writer.write(b);
    }
  }

  private static void readAll(org.tensorcache.store.segment.Segments store, int files)
      throws IOException {
    for (int r = 0; r < files; r++) {
      if (store.read(r).isEmpty()) {
        throw new IllegalStateException("segment " + r + " missing right after it was written");
      }
    }
  }

  private static double time(Step step) throws IOException {
    long t0 = System.nanoTime();
    step.run();
    return System.nanoTime() - t0;
  }

  private static Block filled(CacheSpec spec, int range, SplittableRandom random) {
    Block block = Block.empty(spec, range);
    for (long i = block.start(); i < block.start() + block.length(); i++) {
      block.put(
          i,
          new float[][] {
            {(float) (-50 * random.nextDouble())}, {(float) (-50 * random.nextDouble())}
          });
    }
    return block;
  }
}
