package org.tensorcache.actors.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.serialization.Serialization;
import org.apache.pekko.serialization.SerializationExtension;
import org.tensorcache.actors.cache.BlockCodec;
import org.tensorcache.actors.cache.BlockData;
import org.tensorcache.actors.session.RunConfig;
import org.tensorcache.actors.session.SessionStep;
import org.tensorcache.actors.session.TrainerSessionState;
import org.tensorcache.actors.session.WorldSchedule;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.serialization.KryoSerializer;
import org.tensorcache.store.serialization.KryoSettings;
import org.tensorcache.store.spec.CacheSpec;

/**
 * Writes the seed inputs of {@link KryoMessagesFuzzTest} (each message of {@link
 * MessageSerializationTest}'s samples and a few of a trainer session's, after its registration id)
 * and of {@code BlockCodecFuzzTest} (the replicated blocks of those samples and a block of every
 * dtype).
 *
 * <p>Run from {@code actors} with the test class path: {@code java -cp
 * target/test-classes:target/classes:$(cat cp.txt) org.tensorcache.actors.cluster.FuzzSeeds
 * src/test/resources/org/tensorcache/actors}, where {@code cp.txt} is from {@code mvn
 * dependency:build-classpath -Dmdep.outputFile=cp.txt}.
 */
public final class FuzzSeeds {
  private FuzzSeeds() {}

  /** Writes the seeds under the resource directory of the package tree {@code args[0]}. */
  public static void main(String[] args) throws IOException {
    Path root = Path.of(args[0]);
    try {
      // the samples' actor refs belong to that test's system: its serializer writes them
      kryoSeeds(
          MessageSerializationTest.testKit,
          root.resolve("cluster/KryoMessagesFuzzTestInputs/fromBinary"));
      blockSeeds(root.resolve("cache/BlockCodecFuzzTestInputs/decode"));
    } finally {
      MessageSerializationTest.stop();
    }
  }

  private static void kryoSeeds(ActorTestKit testKit, Path dir) throws IOException {
    Files.createDirectories(dir);
    Serialization serialization = SerializationExtension.get(testKit.system().classicSystem());
    Map<Class<?>, Integer> ids =
        KryoSettings.fromConfig(
                testKit.system().settings().config(), FuzzSeeds.class.getClassLoader())
            .idsByClass();
    List<Object> messages = new ArrayList<>(MessageSerializationTest.kryoSamples());
    RunConfig run = new RunConfig(1000, 42, 64, "dpo-ref");
    WorldSchedule schedule = WorldSchedule.of(0, 4).from(6, 2);
    messages.add(run);
    messages.add(schedule);
    messages.add(new SessionStep(17, 1, new long[] {5, 999, 0, 1L << 40}));
    messages.add(new TrainerSessionState.SessionOpened(run, 2, 0, 4));
    messages.add(new TrainerSessionState.Opened(run, 2, schedule, 17));
    for (Object message : messages) {
      KryoSerializer kryo = (KryoSerializer) serialization.findSerializerFor(message);
      int id = ids.get(message.getClass());
      byte[] bytes = kryo.toBinary(message);
      byte[] seed = new byte[2 + bytes.length];
      seed[0] = (byte) id;
      seed[1] = (byte) (id >>> 8);
      System.arraycopy(bytes, 0, seed, 2, bytes.length);
      Files.write(dir.resolve(message.getClass().getSimpleName() + "-" + id), seed);
    }
  }

  private static void blockSeeds(Path dir) throws IOException {
    Files.createDirectories(dir);
    List<Object> samples = MessageSerializationTest.blockSamples();
    Files.write(dir.resolve("block-data"), BlockCodec.encode(((BlockData) samples.get(0)).block()));
    Files.write(
        dir.resolve("delta"), BlockCodec.encode(((BlockData.Delta) samples.get(1)).block()));
    CacheSpec typed =
        new CacheSpec(
            "typed",
            100,
            List.of(
                new FieldSpec("emb", DType.F16, new int[] {2}),
                new FieldSpec("gate", DType.BF16, new int[0]),
                new FieldSpec("ids", DType.I32, new int[] {2, 2}),
                new FieldSpec("token", DType.I64, new int[0])),
            70);
    Block block = Block.empty(typed, 1);
    block.put(70, new float[][] {{1.5f, -0f}, {Float.NEGATIVE_INFINITY}, {1, 2, 3, -4}, {-9}});
    block.put(99, new float[][] {{65504f, 2}, {3}, {0, 0, 0, 1 << 24}, {7}});
    Files.write(dir.resolve("typed-partial"), BlockCodec.encode(block));
    Files.write(dir.resolve("typed-empty"), BlockCodec.encode(Block.empty(typed, 0)));
  }
}
