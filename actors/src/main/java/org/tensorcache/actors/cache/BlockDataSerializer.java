package org.tensorcache.actors.cache;

import java.io.NotSerializableException;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.serialization.SerializerWithStringManifest;

/**
 * Pekko serializer for {@link BlockData} and its delta (over {@link BlockCodec}), and for {@link
 * PresenceData} (raw little-endian words).
 */
public final class BlockDataSerializer extends SerializerWithStringManifest {
  private static final String DATA = "D";
  private static final String DELTA = "d";
  private static final String PRESENCE = "P";

  /** Created by Pekko's serialization extension. */
  public BlockDataSerializer(ExtendedActorSystem system) {}

  @Override
  public int identifier() {
    return 7_771_101;
  }

  @Override
  public String manifest(Object o) {
    if (o instanceof BlockData) {
      return DATA;
    }
    if (o instanceof BlockData.Delta) {
      return DELTA;
    }
    if (o instanceof PresenceData) {
      return PRESENCE;
    }
    throw new IllegalArgumentException("cannot serialize " + o.getClass().getName());
  }

  @Override
  public byte[] toBinary(Object o) {
    if (o instanceof BlockData data) {
      return BlockCodec.encode(data.block());
    }
    if (o instanceof BlockData.Delta delta) {
      return BlockCodec.encode(delta.block());
    }
    if (o instanceof PresenceData presence) {
      long[] words = presence.words();
      java.nio.ByteBuffer out =
          java.nio.ByteBuffer.allocate(8 * words.length).order(java.nio.ByteOrder.LITTLE_ENDIAN);
      for (long w : words) {
        out.putLong(w);
      }
      return out.array();
    }
    throw new IllegalArgumentException("cannot serialize " + o.getClass().getName());
  }

  private static PresenceData presence(byte[] bytes) throws NotSerializableException {
    if (bytes.length % 8 != 0) {
      throw new NotSerializableException(
          "presence of " + bytes.length + " bytes, expected a multiple of 8");
    }
    java.nio.ByteBuffer in =
        java.nio.ByteBuffer.wrap(bytes).order(java.nio.ByteOrder.LITTLE_ENDIAN);
    long[] words = new long[bytes.length / 8];
    for (int i = 0; i < words.length; i++) {
      words[i] = in.getLong();
    }
    return new PresenceData(words);
  }

  @Override
  public Object fromBinary(byte[] bytes, String manifest) throws NotSerializableException {
    return switch (manifest) {
      case DATA -> BlockData.of(BlockCodec.decode(bytes));
      case DELTA -> new BlockData.Delta(BlockCodec.decode(bytes));
      case PRESENCE -> presence(bytes);
      default ->
          throw new NotSerializableException(
              "unknown block manifest '" + manifest + "', expected 'D', 'd' or 'P'");
    };
  }
}
