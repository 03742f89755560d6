package org.tensorcache.bench.micro;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.spec.CacheSpec;

/**
 * The block CRDT merge (element-wise MAX where both hold an example) of two complete ranges, next
 * to a plain MAX loop over the same float arrays.
 */
@State(Scope.Thread)
public class MergeBench {
  /** {@code logp-1024}: 1024 examples x 2 scalars; {@code features-1024}: 1024 x one [128]. */
  @Param({"logp-1024", "features-1024"})
  public String layout;

  private Block mine;
  private Block theirs;
  private float[][] a;
  private float[][] b;

  @Setup
  public void setUp() {
    CacheSpec spec = Fixtures.spec(layout);
    mine = Fixtures.full(spec, 1);
    theirs = Fixtures.full(spec, 2);
    a = raw(mine);
    b = raw(theirs);
  }

  /** What Distributed Data does with a block: {@code Block.merge}, a copy then a merge. */
  @Benchmark
  public Block merge() {
    return mine.merge(theirs);
  }

  /**
   * The merge alone. After the first call the values no longer change, but every element is still
   * compared and stored, so each call does the same work.
   */
  @Benchmark
  public void mergeInPlace(Blackhole bh) {
    mine.mergeInPlace(theirs);
    bh.consume(mine.presentCount());
  }

  /** The reference: MAX of the same arrays with no presence bits, loops the JIT can vectorize. */
  @Benchmark
  public void maxLoop(Blackhole bh) {
    for (int f = 0; f < a.length; f++) {
      float[] dst = a[f];
      float[] src = b[f];
      for (int k = 0; k < dst.length; k++) {
        dst[k] = Math.max(dst[k], src[k]);
      }
    }
    bh.consume(a);
  }

  private static float[][] raw(Block block) {
    float[][] values = new float[block.spec().fields().size()][];
    for (int f = 0; f < values.length; f++) {
      values[f] = new float[block.length() * block.spec().fields().get(f).width()];
      block.copyRawValues(f, 0, values[f], 0, values[f].length);
    }
    return values;
  }
}
