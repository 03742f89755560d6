package org.tensorcache.bench.security;

import org.tensorcache.actors.client.RemoteLookupClient;
import org.tensorcache.bench.fixture.SyntheticRunner;
import org.tensorcache.bench.remote.Load;
import org.tensorcache.bench.remote.RemoteBench;

/** What {@link SecureClient} measures and how it checks the values it gets. */
final class LookupTargets {
  /** Replies whose every value is checked: the first of each thread and every 16th after it. */
  static final int CHECK_EVERY = 16;

  /** The largest batch measured. */
  private static final int MAX_BATCH = 4096;

  private LookupTargets() {}

  /** One thread's client of a port, into arrays it reuses, as a data loader would. */
  static final class Port implements Load.Target<float[][]> {
    private final RemoteLookupClient client;
    private final String cacheId;
    private final float[][] out = new float[2][MAX_BATCH];
    private long replies;

    Port(RemoteLookupClient client, String cacheId) {
      this.client = client;
      this.cacheId = cacheId;
    }

    @Override
    public float[][] fetch(long[] indices) {
      client.lookupInto(cacheId, indices, out);
      return out;
    }

    @Override
    public int check(long[] indices, float[][] reply) {
      return checkSample(replies++, indices, reply);
    }

    @Override
    public void close() {
      client.close();
    }
  }

  /** The same batch gathered from this process's own arrays: what the bytes cost in memory. */
  static final class Gather implements Load.Target<float[][]> {
    private final float[][] values;
    private final float[][] out = new float[2][MAX_BATCH];
    private long replies;

    Gather(float[][] values) {
      this.values = values;
    }

    @Override
    public float[][] fetch(long[] indices) {
      for (int f = 0; f < out.length; f++) {
        float[] from = values[f];
        float[] to = out[f];
        for (int i = 0; i < indices.length; i++) {
          to[i] = from[(int) indices[i]];
        }
      }
      return out;
    }

    @Override
    public int check(long[] indices, float[][] reply) {
      return checkSample(replies++, indices, reply);
    }
  }

  /** Checks every {@link #CHECK_EVERY}th reply whole; returns how many examples it checked. */
  private static int checkSample(long reply, long[] indices, float[][] values) {
    if (reply % CHECK_EVERY != 0) {
      return 0;
    }
    for (int i = 0; i < indices.length; i++) {
      expect(indices[i], values[0][i], values[1][i]);
    }
    return indices.length;
  }

  static void expect(long index, float chosen, float rejected) {
    if (Float.floatToRawIntBits(chosen)
            != Float.floatToRawIntBits(SyntheticRunner.value(RemoteBench.SEED, 0, index))
        || Float.floatToRawIntBits(rejected)
            != Float.floatToRawIntBits(SyntheticRunner.value(RemoteBench.SEED, 1, index))) {
      throw new IllegalStateException("wrong value served for example " + index);
    }
  }
}
