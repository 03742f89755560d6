package org.tensorcache.store.serialization;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.io.NotSerializableException;
import java.util.Arrays;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.actor.testkit.typed.javadsl.LogCapturingExtension;
import org.apache.pekko.actor.testkit.typed.javadsl.TestProbe;
import org.apache.pekko.actor.typed.ActorRef;
import org.apache.pekko.serialization.SerializationExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Round trips through the Pekko serialization of the project's Kryo serializer. */
@ExtendWith(LogCapturingExtension.class)
class KryoSerializerTest {

  /** A tensor-like message: primitive arrays, a nested record, an enum and a reply ref. */
  record Sample(
      String name,
      float[] values,
      long[] indices,
      boolean[] filled,
      Header header,
      Mode mode,
      ActorRef<String> replyTo)
      implements KryoSerializable {}

  /** A nested record. */
  record Header(int range, double[] scale) {}

  /** An enum component. */
  enum Mode {
    FILL,
    LOOKUP
  }

  /** A message whose component type is declared as Object, so Kryo writes its class id. */
  record Holder(Object payload) implements KryoSerializable {}

  /** A field-less message. */
  enum Ping implements KryoSerializable {
    INSTANCE
  }

  /** Implements the marker but has no id in tensorcache.kryo.classes. */
  record Unregistered(int value) implements KryoSerializable {}

  private static ActorTestKit testKit;

  @BeforeAll
  static void start() {
    Config config =
        ConfigFactory.parseResourcesAnySyntax("persistence-test.conf")
            .withFallback(ConfigFactory.defaultReference())
            .resolve();
    testKit = ActorTestKit.create("KryoSerializerTest", config);
  }

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  @Test
  void recordWithArraysEnumNestedRecordAndActorRefRoundTrips() {
    TestProbe<String> probe = testKit.createTestProbe();
    Sample sample =
        new Sample(
            "chosen_logp",
            new float[] {-1.5f, Float.NEGATIVE_INFINITY, Float.NaN, 3e-8f},
            new long[] {0, 1_000_000_007L, -1},
            new boolean[] {true, false, true},
            new Header(7, new double[] {0.5, -0.25}),
            Mode.LOOKUP,
            probe.ref());

    Sample copy = testKit.serializationTestKit().verifySerialization(sample, false);

    assertEquals(sample.name(), copy.name());
    assertArrayEquals(sample.values(), copy.values());
    assertArrayEquals(sample.indices(), copy.indices());
    assertArrayEquals(sample.filled(), copy.filled());
    assertEquals(7, copy.header().range());
    assertArrayEquals(sample.header().scale(), copy.header().scale());
    assertEquals(Mode.LOOKUP, copy.mode());
    assertEquals(sample.replyTo(), copy.replyTo());
    copy.replyTo().tell("reply through the resolved ref");
    probe.expectMessage("reply through the resolved ref");
  }

  @Test
  void boundSerializerIsKryoWithJavaSerializationOff() {
    assertInstanceOf(
        KryoSerializer.class,
        SerializationExtension.get(testKit.system().classicSystem())
            .findSerializerFor(Ping.INSTANCE));
    assertFalse(
        testKit.system().settings().config().getBoolean("pekko.actor.allow-java-serialization"));
  }

  @Test
  void enumsNullsAndObjectTypedComponentsRoundTrip() {
    assertEquals(
        Ping.INSTANCE, testKit.serializationTestKit().verifySerialization(Ping.INSTANCE, true));
    Holder ints = new Holder(new int[] {1, 2, 3});
    assertArrayEquals(
        new int[] {1, 2, 3},
        (int[]) testKit.serializationTestKit().verifySerialization(ints, false).payload());
    assertNull(
        testKit.serializationTestKit().verifySerialization(new Holder(null), false).payload());
    Sample empty = new Sample(null, new float[0], null, null, null, null, null);
    Sample copy = testKit.serializationTestKit().verifySerialization(empty, false);
    assertEquals(0, copy.values().length);
    assertNull(copy.replyTo());
  }

  @Test
  void messageLargerThanThePooledBufferRoundTripsAndTheNextMessageToo() {
    float[] values = new float[200_000];
    Arrays.fill(values, 0.125f);
    Holder large = new Holder(values);
    assertArrayEquals(
        values,
        (float[]) testKit.serializationTestKit().verifySerialization(large, false).payload());
    assertEquals(
        Ping.INSTANCE, testKit.serializationTestKit().verifySerialization(Ping.INSTANCE, true));
  }

  @Test
  void messageOverTheMaximumSizeFailsNamingItsClass() {
    KryoSerializer serializer = serializer();
    Holder tooLarge = new Holder(new float[3 * 1024 * 1024]);
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> serializer.toBinary(tooLarge));
    assertTrue(e.getMessage().contains(Holder.class.getName()), e.getMessage());
    assertTrue(e.getMessage().contains("8388608 bytes"), e.getMessage());
  }

  @Test
  void unregisteredClassFailsNamingTheClassAndTheConfigKey() {
    KryoSerializer serializer = serializer();
    Unregistered root = new Unregistered(1);
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> serializer.toBinary(root));
    assertTrue(e.getMessage().contains(Unregistered.class.getName()), e.getMessage());
    assertTrue(e.getMessage().contains("tensorcache.kryo.classes"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> serializer.manifest(root));

    Holder nested = new Holder(root);
    IllegalArgumentException inner =
        assertThrows(IllegalArgumentException.class, () -> serializer.toBinary(nested));
    assertTrue(inner.getMessage().contains(Unregistered.class.getName()), inner.getMessage());
    assertTrue(inner.getMessage().contains("tensorcache.kryo.classes"), inner.getMessage());
  }

  @Test
  void unknownManifestFailsNamingIt() {
    KryoSerializer serializer = serializer();
    byte[] bytes = serializer.toBinary(Ping.INSTANCE);
    NotSerializableException unknownId =
        assertThrows(NotSerializableException.class, () -> serializer.fromBinary(bytes, "9999"));
    assertTrue(unknownId.getMessage().contains("9999"), unknownId.getMessage());
    NotSerializableException notAnId =
        assertThrows(
            NotSerializableException.class,
            () -> serializer.fromBinary(bytes, Ping.class.getName()));
    assertTrue(notAnId.getMessage().contains(Ping.class.getName()), notAnId.getMessage());
  }

  @Test
  void trailingOrTruncatedBytesAreRejected() {
    KryoSerializer serializer = serializer();
    Holder message = new Holder(new long[] {1, 2, 3});
    byte[] bytes = serializer.toBinary(message);
    String manifest = serializer.manifest(message);
    byte[] longer = Arrays.copyOf(bytes, bytes.length + 1);
    IllegalArgumentException trailing =
        assertThrows(IllegalArgumentException.class, () -> serializer.fromBinary(longer, manifest));
    assertTrue(trailing.getMessage().contains("1 bytes left over"), trailing.getMessage());
    byte[] shorter = Arrays.copyOf(bytes, bytes.length - 4);
    assertThrows(IllegalArgumentException.class, () -> serializer.fromBinary(shorter, manifest));
  }

  private static KryoSerializer serializer() {
    return (KryoSerializer)
        SerializationExtension.get(testKit.system().classicSystem())
            .findSerializerFor(Ping.INSTANCE);
  }
}
