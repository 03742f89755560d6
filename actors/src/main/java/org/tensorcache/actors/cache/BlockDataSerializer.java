package org.tensorcache.actors.cache;

import java.io.NotSerializableException;
import org.apache.pekko.actor.ExtendedActorSystem;
import org.apache.pekko.serialization.SerializerWithStringManifest;

/** Pekko serializer for {@link BlockData} and its delta, over {@link BlockCodec}. */
public final class BlockDataSerializer extends SerializerWithStringManifest {
  private static final String DATA = "D";
  private static final String DELTA = "d";

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
    throw new IllegalArgumentException("cannot serialize " + o.getClass().getName());
  }

  @Override
  public Object fromBinary(byte[] bytes, String manifest) throws NotSerializableException {
    return switch (manifest) {
      case DATA -> BlockData.of(BlockCodec.decode(bytes));
      case DELTA -> new BlockData.Delta(BlockCodec.decode(bytes));
      default ->
          throw new NotSerializableException(
              "unknown block manifest '" + manifest + "', expected 'D' or 'd'");
    };
  }
}
