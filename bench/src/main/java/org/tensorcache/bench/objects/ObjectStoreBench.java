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
import org.tensorcache.bench.fixture.Rounds;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.report.Results;
import org.tensorcache.bench.report.Stats;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.objects.ObjectLocation;
import org.tensorcache.store.objects.ObjectStorage;
import org.tensorcache.store.objects.ObjectStoreSettings;
import org.tensorcache.store.segment.SegmentStore;
import org.tensorcache.store.segment.Segments;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;
import org.tensorcache.store.spec.FingerprintInputs;
import org.tensorcache.testing.S3ProxyServer;
import software.amazon.awssdk.auth.credentials.AwsBasicCredentials;
import software.amazon.awssdk.auth.credentials.StaticCredentialsProvider;
import software.amazon.awssdk.core.checksums.RequestChecksumCalculation;
import software.amazon.awssdk.core.checksums.ResponseChecksumValidation;
import software.amazon.awssdk.core.sync.RequestBody;
import software.amazon.awssdk.http.apache5.Apache5HttpClient;
import software.amazon.awssdk.regions.Region;
import software.amazon.awssdk.services.s3.LegacyMd5Plugin;
import software.amazon.awssdk.services.s3.S3Client;

/**
 * Segments written and read through S3-compatible object storage (a real S3Proxy on loopback, its
 * filesystem backend on this machine's disk) next to the same segments in a local directory, and
 * next to what a user would do instead: the same bytes as plain objects with the AWS SDK (no
 * conditional create, no checks). Alternating rounds, medians.
 */
public final class ObjectStoreBench {
  private static final String BUCKET = "bench";

  private ObjectStoreBench() {}

  public static void run(Path work, Path resultsDir, RunSize size) throws Exception {
    int files = size.pick(64, 32, 4);
    int rounds = size.pick(5, 3, 1);
    List<FieldSpec> fields =
        List.of(FieldSpec.scalar("chosen_logp"), FieldSpec.scalar("rejected_logp"));
    CacheSpec spec = new CacheSpec("bench", files * 4096L, fields, 4096);
    Fingerprint fp = Fingerprint.of(new FingerprintInputs("bench", "1", "w", "d", Map.of(), spec));
    List<Block> blocks = new ArrayList<>();
    SplittableRandom random = new SplittableRandom(1);
    for (int r = 0; r < files; r++) {
      blocks.add(filled(spec, r, random));
    }
    Path dir = Files.createDirectories(work.resolve("objects"));
    Path sample = dir.resolve("sample").resolve(SegmentStore.fileName(0));
    Map<String, double[]> t = new LinkedHashMap<>(); // nanoseconds by step, per round
    var credentials =
        StaticCredentialsProvider.create(
            AwsBasicCredentials.create(S3ProxyServer.IDENTITY, S3ProxyServer.CREDENTIAL));
    try (S3ProxyServer server = S3ProxyServer.start(dir.resolve("s3proxy"));
        ObjectStorage storage =
            ObjectStorage.open(
                ObjectStoreSettings.defaults().withEndpoint(server.endpoint()), credentials);
        // the plain client set up as an S3-compatible server needs it
        S3Client plain =
            S3Client.builder()
                .httpClientBuilder(Apache5HttpClient.builder())
                .endpointOverride(server.endpoint())
                .forcePathStyle(true)
                .region(Region.US_EAST_1)
                .requestChecksumCalculation(RequestChecksumCalculation.WHEN_REQUIRED)
                .responseChecksumValidation(ResponseChecksumValidation.WHEN_REQUIRED)
                .addPlugin(LegacyMd5Plugin.create())
                .credentialsProvider(credentials)
                .build()) {
      server.createBucket(BUCKET);
      SegmentStore.open(sample.getParent(), spec, fp).write(blocks.get(0));
      for (int round = 0; round < rounds; round++) {
        String tag = "r" + round;
        var location = ObjectLocation.parse("s3://" + BUCKET + "/" + tag);
        Segments<Block> local = SegmentStore.open(dir.resolve("local-" + tag), spec, fp);
        Segments<Block> objects =
            storage.segments(location, dir.resolve("copies-" + tag), spec, fp);
        Segments<Block> reader = storage.segments(location, dir.resolve("reader-" + tag), spec, fp);
        Map<String, Rounds.Step> steps = new LinkedHashMap<>();
        steps.put("local_segment_write", i -> writeAll(local, blocks));
        steps.put("object_segment_write", i -> writeAll(objects, blocks));
        steps.put("plain_put_same_bytes", i -> putAll(plain, tag, sample, files));
        steps.put("local_segment_read", i -> readAll(local, files));
        steps.put("object_segment_read", i -> readAll(reader, files));
        steps.put("plain_get_same_bytes", i -> getAll(plain, tag, files));
        for (var step : steps.entrySet()) {
          long t0 = System.nanoTime();
          step.getValue().run(round);
          t.computeIfAbsent(step.getKey(), k -> new double[rounds])[round] = System.nanoTime() - t0;
        }
      }
    }
    long bytes = Files.size(sample);
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("files", files);
    row.put("bytes_per_file", bytes);
    System.out.printf(
        "%d segments of %d bytes; MB/s (ms per segment), medians of %d rounds%n",
        files, bytes, rounds);
    for (var step : t.entrySet()) {
      double seconds = Stats.median(step.getValue()) / 1e9;
      double mbs = bytes * (double) files / 1e6 / seconds;
      String name = step.getKey();
      System.out.printf("  %-22s %8.1f MB/s  (%.2f ms)%n", name, mbs, seconds * 1000 / files);
      row.put(name + "_mb_s", Math.round(mbs * 10) / 10.0);
      row.put(name + "_ms_per_segment", Math.round(seconds * 1e6 / files) / 1000.0);
    }
    row.put(
        "note",
        "object storage: S3Proxy 4.1.0 (filesystem backend) on loopback, AWS SDK for Java v2;"
            + " a segment write there is a conditional create (If-None-Match) of a checked file,"
            + " a read a download into a verified local copy; plain_*: the same bytes as plain"
            + " objects, unchecked");
    Map<String, Object> results = new LinkedHashMap<>(Map.of("benchmark", "objects"));
    results.put("when", Instant.now().toString());
    results.put("machine", Results.machine());
    results.put("size", size.label());
    results.put("objects", row);
    Results.write(resultsDir.resolve("objects.json"), results);
  }

  private static void writeAll(Segments<Block> store, List<Block> blocks) throws IOException {
    for (Block b : blocks) {
      store.write(b);
    }
  }

  private static void readAll(Segments<Block> store, int files) throws IOException {
    for (int r = 0; r < files; r++) {
      if (store.read(r).isEmpty()) {
        throw new IllegalStateException("segment " + r + " missing right after it was written");
      }
    }
  }

  private static void putAll(S3Client client, String prefix, Path file, int n) {
    for (int i = 0; i < n; i++) {
      String key = "plain/" + prefix + "/" + i;
      client.putObject(b -> b.bucket(BUCKET).key(key), RequestBody.fromFile(file));
    }
  }

  /** Downloads every object {@link #putAll} uploaded, as bytes in memory. */
  private static void getAll(S3Client client, String prefix, int n) {
    long total = 0;
    for (int i = 0; i < n; i++) {
      String key = "plain/" + prefix + "/" + i;
      total += client.getObjectAsBytes(b -> b.bucket(BUCKET).key(key)).asByteArray().length;
    }
    if (total == 0) {
      throw new IllegalStateException("downloaded nothing under " + prefix);
    }
  }

  private static Block filled(CacheSpec spec, int range, SplittableRandom random) {
    Block block = Block.empty(spec, range);
    for (long i = block.start(); i < block.start() + block.length(); i++) {
      float[][] values = {
        {(float) (-50 * random.nextDouble())}, {(float) (-50 * random.nextDouble())}
      };
      block.put(i, values);
    }
    return block;
  }
}
