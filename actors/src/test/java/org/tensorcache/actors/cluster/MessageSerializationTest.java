package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Array;
import java.lang.reflect.RecordComponent;
import java.util.ArrayList;
import java.util.List;
import org.apache.pekko.Done;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.pattern.StatusReply;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.tensorcache.actors.cache.BlockData;
import org.tensorcache.actors.cache.BlockDataSerializer;
import org.tensorcache.actors.cache.PresenceData;
import org.tensorcache.actors.coordinator.CacheStatus;
import org.tensorcache.actors.coordinator.Coordinator;
import org.tensorcache.actors.coordinator.CoordinatorState;
import org.tensorcache.actors.lookup.LookupActor;
import org.tensorcache.actors.lookup.LookupTimeoutException;
import org.tensorcache.actors.replica.TierReporter;
import org.tensorcache.actors.shard.ShardActor;
import org.tensorcache.actors.structure.WireTypes;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.serialization.KryoSerializer;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.tier.TierStats;

/**
 * Every message, event, state and reply of shards, lookups and the coordinator survives its
 * serializer with equal content: Kryo for messages, the block codec for replicated blocks and
 * presence; and every such type of the module has a sample here.
 */
class MessageSerializationTest {
  static final ActorTestKit testKit = ActorTestKit.create();

  private static final CacheSpec BLOCKS =
      new CacheSpec("blocks", 300, List.of(FieldSpec.scalar("a"), FieldSpec.vector("v", 3)), 128);

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  /** One of every message, event, state and reply that Kryo writes, with edge-case values. */
  static List<Object> kryoSamples() {
    ActorRef<StatusReply<ShardActor.Computed>> computed =
        testKit.<StatusReply<ShardActor.Computed>>createTestProbe().ref();
    ActorRef<StatusReply<LookupActor.Values>> batches =
        testKit.<StatusReply<LookupActor.Values>>createTestProbe().ref();
    ActorRef<StatusReply<Done>> acks = testKit.<StatusReply<Done>>createTestProbe().ref();
    ActorRef<Coordinator.Status> statuses = testKit.<Coordinator.Status>createTestProbe().ref();
    ActorRef<TierReporter.TierReport> reports =
        testKit.<TierReporter.TierReport>createTestProbe().ref();
    long[] indices = {0, 17, 1L << 40, -1};
    float[][] values = {{1f, Float.NEGATIVE_INFINITY, -0f, Float.NaN}, {2.5f, 3f, 4f, 5f}};
    CacheStatus cache =
        new CacheStatus(
            "dpo-ref-ab12", 2000, 1536, 4, 3, 2, true, true, 1500, new byte[] {3, 3, 2, 4});
    TierReporter.CacheTiers tiers =
        new TierReporter.CacheTiers(
            "dpo-ref-ab12",
            new TierStats.Snapshot(9200, 640, 160, 96, 31, 2, 3L << 30, 4L << 30, 12, 74, 0));
    TierReporter.CacheTiers untouched =
        new TierReporter.CacheTiers("embed-cd34", new TierStats().snapshot());
    ActorRef<StatusReply<org.tensorcache.actors.shard.RowShard.ComputedRows>> rowsTo =
        testKit
            .<StatusReply<org.tensorcache.actors.shard.RowShard.ComputedRows>>createTestProbe()
            .ref();
    CoordinatorState.CacheProgress progress =
        new CoordinatorState.CacheProgress("dpo-ref-ab12", true, new long[] {0b1011, 1L << 63});
    return List.of(
        ShardActor.Fill.INSTANCE,
        new ShardActor.Compute(indices, computed),
        new ShardActor.Computed(indices, values),
        new org.tensorcache.actors.shard.RowShard.ComputeRows(indices, 196608, rowsTo),
        new org.tensorcache.actors.shard.RowShard.ComputedRows(
            indices, new int[] {2, 1}, new byte[][] {{1, 2, 3}, {}}),
        new LookupActor.GetValues("dpo-ref-ab12", indices, batches),
        new LookupActor.Values(indices, values),
        new TierReporter.GetTierStats(reports),
        new TierReporter.TierReport(
            "pekko://TensorCache@10.0.0.2:25520",
            4L << 30,
            3L << 30,
            4L << 30,
            "lru",
            new TierReporter.CacheTiers[] {tiers, untouched}),
        new TierReporter.TierReport(
            "pekko://TensorCache@10.0.0.3:25520", 1, 0, 0, "lfu", new TierReporter.CacheTiers[0]),
        tiers,
        new Coordinator.StartFill("dpo-ref-ab12", acks),
        new Coordinator.FromShard(new ShardActor.RangeWritten("dpo-ref-ab12", 65)),
        new ShardActor.RangeWritten("dpo-ref-ab12", 66),
        new Coordinator.GetStatus(statuses),
        new Coordinator.Status(new CacheStatus[] {cache, cache}),
        cache,
        CoordinatorState.empty(),
        new CoordinatorState(new CoordinatorState.CacheProgress[] {progress}),
        progress,
        new CoordinatorState.FillRequested("dpo-ref-ab12"),
        new CoordinatorState.RangePersisted("dpo-ref-ab12", 65),
        new CoordinatorState.RangeLost("dpo-ref-ab12", 3, "crc mismatch"));
  }

  /** Two examples of range 2 of {@link #BLOCKS}, with infinities and a negative zero. */
  private static Block block() {
    Block block = Block.empty(BLOCKS, 2);
    block.put(256, new float[][] {{-1.5f}, {1f, 2f, 3f}});
    block.put(299, new float[][] {{Float.NEGATIVE_INFINITY}, {0f, -0f, 7f}});
    return block;
  }

  /** One of every replicated data type that the block codec writes. */
  static List<Object> blockSamples() {
    Block part = Block.empty(BLOCKS, 2);
    part.put(260, new float[][] {{4f}, {5f, 6f, 7f}});
    return List.of(
        BlockData.of(block()).with(part),
        new BlockData.Delta(part),
        new PresenceData(new long[] {0b1011, 1L << 63, -1L, 0}));
  }

  @Test
  void everyMessageRoundTripsThroughKryoWithEqualContent() {
    Serialization serialization = SerializationExtension.get(Adapter.toClassic(testKit.system()));
    for (Object message : kryoSamples()) {
      assertInstanceOf(
          KryoSerializer.class, serialization.findSerializerFor(message), message::toString);
      Object copy = testKit.serializationTestKit().verifySerialization(message, false);
      assertSameContent(message, copy, message.getClass().getSimpleName());
    }
  }

  @Test
  void blocksAndDeltasRoundTripThroughTheBlockCodec() {
    Serialization serialization = SerializationExtension.get(Adapter.toClassic(testKit.system()));
    for (Object data : blockSamples()) {
      assertInstanceOf(BlockDataSerializer.class, serialization.findSerializerFor(data));
      Object copy = testKit.serializationTestKit().verifySerialization(data, true);
      assertNotSame(data, copy);
    }
    Block block = block();
    BlockData copy = testKit.serializationTestKit().verifySerialization(BlockData.of(block), true);
    assertEquals(2, copy.block().presentCount());
    assertEquals(block, copy.block());
    PresenceData presence = new PresenceData(new long[] {0b1011, 1L << 63});
    PresenceData presenceCopy = testKit.serializationTestKit().verifySerialization(presence, true);
    assertEquals(4, presenceCopy.count());
    assertArrayEquals(presence.words(), presenceCopy.words());
  }

  @Test
  void repliesToAnotherNodeRoundTripInsideAStatusReply() {
    long[] indices = {3, 1L << 33};
    float[][] values = {{Float.NaN, -0f}, {1f, 2f}};
    List<StatusReply<?>> replies =
        List.of(
            StatusReply.success(new ShardActor.Computed(indices, values)),
            StatusReply.success(new LookupActor.Values(indices, values)),
            StatusReply.ack());
    for (StatusReply<?> reply : replies) {
      StatusReply<?> copy = testKit.serializationTestKit().verifySerialization(reply, false);
      assertTrue(copy.isSuccess(), copy::toString);
      assertSameContent(reply.getValue(), copy.getValue(), "StatusReply.value");
    }
    String error = "index 1200000 out of range [0, 1000000) for cache 'dpo-ref'";
    StatusReply<Object> failed = StatusReply.error(error);
    assertEquals(
        error,
        testKit.serializationTestKit().verifySerialization(failed, false).getError().getMessage());
    // a lookup timeout keeps its type across nodes: the asking node counts it as a timeout
    String late = "lookup of 3 indices of cache 'dpo-ref' failed: not computed within 300 ms";
    Throwable timeout =
        testKit
            .serializationTestKit()
            .verifySerialization(StatusReply.error(new LookupTimeoutException(late)), false)
            .getError();
    assertInstanceOf(LookupTimeoutException.class, timeout);
    assertEquals(late, timeout.getMessage());
  }

  /**
   * The samples here cover every type of this module that crosses nodes (the trainer session's are
   * in {@code TrainerSessionSerializationTest}): a new message, bound type or Kryo registration
   * without a sample fails here.
   */
  @Test
  void everyTypeThatCrossesNodesHasASampleHere() {
    List<Object> samples = new ArrayList<>(kryoSamples());
    samples.addAll(blockSamples());
    WireTypes.assertCovered(
        samples,
        type ->
            type.getName().startsWith("org.tensorcache.actors.")
                && !type.getPackageName().equals("org.tensorcache.actors.session"),
        testKit.system().settings().config(),
        getClass().getSimpleName());
  }

  /** Records compared component by component, arrays element by element. */
  private static void assertSameContent(Object expected, Object actual, String path) {
    if (expected == null || actual == null) {
      assertEquals(expected, actual, path);
    } else if (expected.getClass().isArray()) {
      assertEquals(expected.getClass(), actual.getClass(), path);
      assertEquals(Array.getLength(expected), Array.getLength(actual), path + ".length");
      for (int i = 0; i < Array.getLength(expected); i++) {
        assertSameContent(Array.get(expected, i), Array.get(actual, i), path + "[" + i + "]");
      }
    } else if (expected.getClass().isRecord()) {
      assertEquals(expected.getClass(), actual.getClass(), path);
      for (RecordComponent c : expected.getClass().getRecordComponents()) {
        try {
          assertSameContent(
              c.getAccessor().invoke(expected),
              c.getAccessor().invoke(actual),
              path + "." + c.getName());
        } catch (ReflectiveOperationException e) {
          throw new AssertionError(path + "." + c.getName(), e);
        }
      }
    } else if (expected instanceof Float f) {
      // bit for bit: -0 and NaN are values too
      assertEquals(Float.floatToRawIntBits(f), Float.floatToRawIntBits((Float) actual), path);
    } else {
      assertEquals(expected, actual, path);
    }
  }
}
