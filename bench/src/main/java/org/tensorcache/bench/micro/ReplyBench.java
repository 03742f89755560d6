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

/**
 * A lookup reply of {@code batch} indices with two float fields, serialized and read back: with the
 * project's Kryo, as the message that crosses the network through Pekko's serialization, raw
 * little-endian bulk copies, and Jackson CBOR. Only the network form starts an ActorSystem, which
 * costs seconds per forked JVM.
 */
@State(Scope.Thread)
public class ReplyBench {
  @Param({"32", "256", "4096"})
  public int batch;

  private final ReplyCodecs.ProductKryo kryo = new ReplyCodecs.ProductKryo();
  private LookupActor.Values reply;
  private StatusReply<ShardActor.Computed> wire;

  /** An ActorSystem only for the benchmarks that go through Pekko's serialization. */
  @State(Scope.Thread)
  public static class PekkoState {
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

  @Setup
  public void setUp() {
    long[] indices = Fixtures.indices(batch, 1);
    float[][] values = Fixtures.replyValues(batch, 2);
    reply = ReplyCodecs.reply(indices, values);
    wire = StatusReply.success(new ShardActor.Computed(indices, reply.values()));
  }

  /** {@code LookupActor.Values} through the project's Kryo, set up as its Pekko serializer does. */
  @Benchmark
  public void kryo(Blackhole bh) {
    bh.consume(kryo.read(kryo.write(reply), LookupActor.Values.class));
  }

  /**
   * What crosses the network for a lookup: a shard's {@code StatusReply<Computed>} (same arrays),
   * which Pekko's MiscMessageSerializer wraps around the Kryo bytes of the payload.
   */
  @Benchmark
  public void kryoWire(PekkoState state, Blackhole bh) {
    bh.consume(state.pekko.roundTrip(wire));
  }

  @Benchmark
  public void raw(Blackhole bh) {
    bh.consume(ReplyCodecs.rawDecode(ReplyCodecs.rawEncode(reply)));
  }

  @Benchmark
  public void cbor(Blackhole bh) throws IOException {
    bh.consume(ReplyCodecs.cborDecode(ReplyCodecs.cborEncode(reply)));
  }
}
