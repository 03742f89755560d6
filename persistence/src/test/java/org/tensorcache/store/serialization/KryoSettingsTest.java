package org.tensorcache.store.serialization;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import org.apache.pekko.actor.typed.ActorRef;
import org.junit.jupiter.api.Test;

/** Reading {@code tensorcache.kryo}: the defaults and the errors of a bad registration. */
class KryoSettingsTest {

  @Test
  void referenceRegistersPrimitiveArraysAndActorRef() {
    KryoSettings settings = read("");
    assertEquals(15, settings.idsByClass().get(float[].class));
    assertEquals(20, settings.idsByClass().get(ActorRef.class));
    assertEquals(64 * 1024, settings.bufferSize());
  }

  @Test
  void unknownClassIsNamed() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> read("tensorcache.kryo.classes { \"org.example.Missing\" = 4000 }"));
    assertTrue(e.getMessage().contains("org.example.Missing"), e.getMessage());
  }

  @Test
  void duplicateIdNamesBothClasses() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> read("tensorcache.kryo.classes { \"java.util.ArrayList\" = 15 }"));
    assertTrue(e.getMessage().contains("java.util.ArrayList"), e.getMessage());
    assertTrue(e.getMessage().contains("[F"), e.getMessage());
  }

  @Test
  void idReservedByKryoIsRejected() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> read("tensorcache.kryo.classes { \"java.util.ArrayList\" = 3 }"));
    assertTrue(e.getMessage().contains("reserved"), e.getMessage());
  }

  @Test
  void bufferLargerThanTheMaximumIsRejected() {
    assertThrows(
        IllegalArgumentException.class,
        () -> read("tensorcache.kryo { buffer-size = 2 MiB, max-buffer-size = 1 MiB }"));
  }

  private static KryoSettings read(String overrides) {
    Config config =
        ConfigFactory.parseString(overrides)
            .withFallback(ConfigFactory.defaultReference())
            .resolve();
    return KryoSettings.fromConfig(config, KryoSettingsTest.class.getClassLoader());
  }
}
