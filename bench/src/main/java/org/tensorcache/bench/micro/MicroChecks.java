package org.tensorcache.bench.micro;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.pekko.pattern.StatusReply;
import org.tensorcache.actors.lookup.LookupActor;
import org.tensorcache.actors.shard.ShardActor;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.segment.SegmentFile;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * What is checked before anything is timed, in the launching JVM: the in-memory segment bytes equal
 * a real segment file's and decode like it, and every reply codec reads back what it wrote. Also
 * measures the sizes that go next to the timings.
 */
final class MicroChecks {
  private MicroChecks() {}

  /** Bytes of the segment of each layout, after checking it against {@link SegmentFile}. */
  static Map<String, Integer> segmentBytes(List<String> layouts) throws Exception {
    Map<String, Integer> sizes = new LinkedHashMap<>();
    Path dir = Files.createTempDirectory("micro-segments");
    try {
      for (String layout : layouts) {
        CacheSpec spec = Fixtures.spec(layout);
        Fingerprint fp = Fixtures.fingerprint(spec);
        Block block = Fixtures.full(spec, 1);
        Path file = dir.resolve(layout + ".safetensors");
        SegmentFile.write(file, block, fp);
        byte[] memory = SegmentBytes.encode(block, fp);
        if (!Arrays.equals(memory, Files.readAllBytes(file))) {
          throw new IllegalStateException(
              "in-memory segment of " + layout + " differs from SegmentFile.write's bytes");
        }
        Block fromFile = SegmentFile.read(file, spec, fp, 0);
        if (!fromFile.equals(block) || !SegmentBytes.decode(memory, spec, fp, 0).equals(block)) {
          throw new IllegalStateException("segment of " + layout + " does not read back");
        }
        Files.delete(file);
        sizes.put(layout, memory.length);
      }
    } finally {
      Files.deleteIfExists(dir);
    }
    return sizes;
  }

  /**
   * Per batch size, the bytes of a reply in each codec ({@code kryo}, {@code kryo_wire}, {@code
   * raw}, {@code cbor}), after a round trip of each and a check that the benchmark's Kryo writes
   * what Pekko's serializer writes; {@code serializers} names the classes Pekko picks.
   */
  static Map<String, Object> replyBytes(int[] batches) throws Exception {
    Map<String, Object> out = new LinkedHashMap<>();
    ReplyCodecs.ProductKryo kryo = new ReplyCodecs.ProductKryo();
    try (ReplyCodecs.Pekko pekko = new ReplyCodecs.Pekko()) {
      for (int batch : batches) {
        long[] indices = Fixtures.indices(batch, 1);
        float[][] values = Fixtures.replyValues(batch, 2);
        LookupActor.Values reply = ReplyCodecs.reply(indices, values);
        var wire = StatusReply.success(new ShardActor.Computed(indices, reply.values()));
        check("pekko", reply, (LookupActor.Values) pekko.roundTrip(reply));
        if (!Arrays.equals(kryo.write(reply), pekko.toBinary(reply))) {
          throw new IllegalStateException("the project's Kryo set up here writes other bytes");
        }
        check("kryo", reply, kryo.read(kryo.write(reply), LookupActor.Values.class));
        @SuppressWarnings("unchecked")
        var back = (StatusReply<ShardActor.Computed>) pekko.roundTrip(wire);
        ShardActor.Computed c = back.getValue();
        check("kryo wire", reply, new LookupActor.Values(c.indices(), c.values()));
        check("raw", reply, ReplyCodecs.rawDecode(ReplyCodecs.rawEncode(reply)));
        check("cbor", reply, ReplyCodecs.cborDecode(ReplyCodecs.cborEncode(reply)));
        Map<String, Integer> sizes = new LinkedHashMap<>();
        sizes.put("kryo", kryo.write(reply).length);
        sizes.put("kryo_wire", pekko.toBinary(wire).length);
        sizes.put("raw", ReplyCodecs.rawEncode(reply).length);
        sizes.put("cbor", ReplyCodecs.cborEncode(reply).length);
        out.put(Integer.toString(batch), sizes);
        if (!out.containsKey("serializers")) {
          out.put(
              "serializers",
              Map.of(
                  "LookupActor.Values", pekko.serializerOf(reply),
                  "StatusReply<ShardActor.Computed>", pekko.serializerOf(wire)));
        }
      }
    }
    return out;
  }

  private static void check(String codec, LookupActor.Values sent, LookupActor.Values got) {
    boolean same =
        Arrays.equals(sent.indices(), got.indices())
            && Arrays.deepEquals(sent.values(), got.values());
    if (!same) {
      throw new IllegalStateException(
          codec
              + " did not read back the reply of "
              + sent.indices().length
              + " indices: sent fields "
              + fieldTypes(sent)
              + ", read "
              + fieldTypes(got));
    }
  }

  private static String fieldTypes(LookupActor.Values reply) {
    return Arrays.stream(reply.values())
        .map(f -> f == null ? "null" : f.getClass().getSimpleName())
        .toList()
        .toString();
  }
}
