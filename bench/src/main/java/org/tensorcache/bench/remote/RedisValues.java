package org.tensorcache.bench.remote;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import redis.clients.jedis.Jedis;
import redis.clients.jedis.Pipeline;

/**
 * The examples' values as Redis keeps them for the Redis reference: key {@code tc:INDEX}, both
 * fields as one 8-byte value; loaded into a server of test-support's {@code RedisServer}.
 */
final class RedisValues {
  private static final int LOAD_CHUNK = 1_000;

  private RedisValues() {}

  /** Loads example {@code i} as key {@link #key}(i) into the server on {@code port}. */
  static void load(int port, float[] chosen, float[] rejected) {
    try (Jedis jedis = new Jedis("127.0.0.1", port)) {
      Pipeline pipe = jedis.pipelined();
      for (int from = 0; from < chosen.length; from += LOAD_CHUNK) {
        int to = Math.min(chosen.length, from + LOAD_CHUNK);
        byte[][] keysAndValues = new byte[2 * (to - from)][];
        for (int i = from; i < to; i++) {
          keysAndValues[2 * (i - from)] = key(i);
          keysAndValues[2 * (i - from) + 1] = value(chosen[i], rejected[i]);
        }
        pipe.mset(keysAndValues);
      }
      pipe.sync();
      long size = jedis.dbSize();
      if (size != chosen.length) {
        throw new IllegalStateException("redis holds " + size + " keys, expected " + chosen.length);
      }
    }
  }

  /** The key of example {@code index}. */
  static byte[] key(long index) {
    return ("tc:" + index).getBytes(StandardCharsets.US_ASCII);
  }

  /** The two floats of an example as 8 little-endian bytes. */
  static byte[] value(float chosen, float rejected) {
    return ByteBuffer.allocate(8)
        .order(ByteOrder.LITTLE_ENDIAN)
        .putFloat(chosen)
        .putFloat(rejected)
        .array();
  }
}
