package org.tensorcache.actors.cluster;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.NotSerializableException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.apache.pekko.actor.testkit.typed.javadsl.ActorTestKit;
import org.apache.pekko.serialization.SerializationExtension;
import org.junit.jupiter.api.AfterAll;
import org.tensorcache.actors.shard.ShardActor;
import org.tensorcache.store.serialization.KryoSerializer;
import org.tensorcache.store.serialization.KryoSettings;

/**
 * Arbitrary bytes as a message of each class registered for Kryo ({@link KryoSerializer#fromBinary}
 * with its id as the manifest): a message of that class, or an {@link IllegalArgumentException}
 * naming the class, never another exception, and no allocation sized by a fuzzed length. A message
 * read writes bytes that read back to a message that writes the same bytes.
 */
class KryoMessagesFuzzTest {
  private static final ActorTestKit testKit = ActorTestKit.create("KryoMessagesFuzzTest");

  private static final KryoSerializer kryo =
      (KryoSerializer)
          SerializationExtension.get(testKit.system().classicSystem())
              .findSerializerFor(ShardActor.Fill.INSTANCE);

  private static final Map<Integer, Class<?>> classes =
      KryoSettings.fromConfig(
              testKit.system().settings().config(), KryoMessagesFuzzTest.class.getClassLoader())
          .classes();

  private static final List<Integer> ids = new ArrayList<>(classes.keySet());

  @AfterAll
  static void stop() {
    testKit.shutdownTestKit();
  }

  /**
   * The first two bytes are a registration id (little-endian; one that is not registered picks one
   * that is), the others the message.
   */
  @FuzzTest(maxDuration = "3m")
  void fromBinary(byte[] input) throws NotSerializableException {
    if (input.length < 2) {
      return;
    }
    int id = (input[0] & 0xff) | (input[1] & 0xff) << 8;
    if (!classes.containsKey(id)) {
      id = ids.get(id % ids.size());
    }
    String manifest = Integer.toString(id);
    byte[] bytes = Arrays.copyOfRange(input, 2, input.length);
    Object message;
    try {
      message = kryo.fromBinary(bytes, manifest);
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage().contains(classes.get(id).getName()), e.getMessage());
      return;
    }
    assertTrue(classes.get(id).isInstance(message), message + " is no " + classes.get(id));
    if (!classes.containsValue(message.getClass())) {
      return; // read as an interface registered for nesting (ActorRef): toBinary takes classes
    }
    byte[] written = kryo.toBinary(message);
    assertArrayEquals(written, kryo.toBinary(kryo.fromBinary(written, manifest)));
  }
}
