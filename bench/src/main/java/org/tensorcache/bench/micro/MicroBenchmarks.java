package org.tensorcache.bench.micro;

import java.io.IOException;
import org.apache.pekko.pattern.StatusReply;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.Blackhole;
import org.tensorcache.actors.lookup.LookupActor;
import org.tensorcache.actors.shard.ShardActor;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.segment.SegmentFile;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * The JMH benchmarks, each next to its reference, and the states they work on. A layout {@code
 * logp-N} is N examples x 2 scalars, {@code features-N} N x one [128].
 */
public class MicroBenchmarks {
  /** Two complete blocks of one range, and the first's values as plain float arrays. */
  @State(Scope.Thread)
  public static class Blocks {
    @Param({"logp-1024", "features-1024"})
    public String layout;

    Block mine;
    Block theirs;
    float[][] a;
    float[][] b;

    @Setup
    public void setUp() {
      mine = Fixtures.full(Fixtures.spec(layout), 1);
      theirs = Fixtures.full(Fixtures.spec(layout), 2);
      a = raw(mine);
      b = raw(theirs);
    }

    private static float[][] raw(Block block) {
      float[][] values = new float[block.spec().fields().size()][];
      for (int f = 0; f < values.length; f++) {
        values[f] = new float[block.length() * block.spec().fields().get(f).width()];
        block.copyRawValues(f, 0, values[f], 0, values[f].length);
      }
      return values;
    }
  }

  /** A block and its segment's bytes. */
  @State(Scope.Thread)
  public static class Segment {
    @Param({"logp-1024", "features-4096"})
    public String layout;

    CacheSpec spec;
    Fingerprint fingerprint;
    Block block;
    byte[] encoded;
    byte[] copy;

    @Setup
    public void setUp() throws IOException {
      spec = Fixtures.spec(layout);
      fingerprint = Fixtures.fingerprint(spec);
      block = Fixtures.full(spec, 1);
      encoded = SegmentFile.encode(block, fingerprint);
      copy = new byte[encoded.length];
    }
  }

  /** A lookup reply of {@code batch} indices, and the shard's reply that carries it. */
  @State(Scope.Thread)
  public static class Reply {
    @Param({"32", "256", "4096"})
    public int batch;

    final ReplyCodecs.ProductKryo kryo = new ReplyCodecs.ProductKryo();
    LookupActor.Values values;
    StatusReply<ShardActor.Computed> wire;

    @Setup
    public void setUp() {
      values = Fixtures.reply(batch);
      wire = ReplyCodecs.wire(values);
    }
  }

  /** An ActorSystem, only for the benchmark that goes through Pekko (seconds per forked JVM). */
  @State(Scope.Thread)
  public static class Pekko {
    ReplyCodecs.Pekko pekko;

    @Setup
    public void start() {
      pekko = new ReplyCodecs.Pekko();
    }

    @TearDown
    public void stop() throws Exception {
      pekko.close();
    }
  }

  /** The block CRDT merge as Distributed Data does it: {@code Block.merge}, a copy then a merge. */
  @Benchmark
  public Block merge(Blocks s) {
    return s.mine.merge(s.theirs);
  }

  /** The merge alone: after the first call values no longer change, but each is still compared. */
  @Benchmark
  public void mergeInPlace(Blocks s, Blackhole bh) {
    s.mine.mergeInPlace(s.theirs);
    bh.consume(s.mine.presentCount());
  }

  /** The reference: MAX of the same arrays with no presence bits, loops the JIT can vectorize. */
  @Benchmark
  public void maxLoop(Blocks s, Blackhole bh) {
    for (int f = 0; f < s.a.length; f++) {
      float[] dst = s.a[f];
      float[] src = s.b[f];
      for (int k = 0; k < dst.length; k++) {
        dst[k] = Math.max(dst[k], src[k]);
      }
    }
    bh.consume(s.a);
  }

  /** The CPU side of a segment write: header JSON, float conversion, CRC32C. */
  @Benchmark
  public byte[] encode(Segment s) throws IOException {
    return SegmentFile.encode(s.block, s.fingerprint);
  }

  /** The CPU side of a segment read, with every check of the strict reader. */
  @Benchmark
  public Block decode(Segment s) throws IOException {
    return SegmentFile.decode(s.encoded, s.spec, s.fingerprint, 0);
  }

  /** The reference: the segment's bytes copied once, nothing checked. */
  @Benchmark
  public void rawCopy(Segment s, Blackhole bh) {
    System.arraycopy(s.encoded, 0, s.copy, 0, s.encoded.length);
    bh.consume(s.copy);
  }

  /** The reply through the project's Kryo, set up as its Pekko serializer sets it up. */
  @Benchmark
  public Object kryo(Reply r) {
    return r.kryo.read(r.kryo.write(r.values), LookupActor.Values.class);
  }

  /**
   * What crosses the network: the shard's {@code StatusReply<Computed>}, which Pekko's
   * MiscMessageSerializer writes around the Kryo bytes of its payload.
   */
  @Benchmark
  public Object kryoWire(Reply r, Pekko p) {
    return p.pekko.roundTrip(r.wire);
  }

  @Benchmark
  public Object raw(Reply r) {
    return ReplyCodecs.rawDecode(ReplyCodecs.rawEncode(r.values));
  }

  @Benchmark
  public Object cbor(Reply r) throws IOException {
    return ReplyCodecs.cborDecode(ReplyCodecs.cborEncode(r.values));
  }
}
