package org.tensorcache.bench.micro;

import java.io.IOException;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.Fingerprint;

/**
 * A segment encoded to bytes and strictly decoded in memory (the CPU side of a segment write and
 * read: header JSON, float conversion, CRC32C, every check), next to copying the same number of
 * bytes.
 */
@State(Scope.Thread)
public class SegmentCodecBench {
  /** {@code logp-1024}: 1024 examples x 2 scalars; {@code features-4096}: 4096 x one [128]. */
  @Param({"logp-1024", "features-4096"})
  public String layout;

  private CacheSpec spec;
  private Fingerprint fingerprint;
  private Block block;
  private byte[] encoded;
  private byte[] copy;

  @Setup
  public void setUp() throws IOException {
    spec = Fixtures.spec(layout);
    fingerprint = Fixtures.fingerprint(spec);
    block = Fixtures.full(spec, 1);
    encoded = SegmentBytes.encode(block, fingerprint);
    copy = new byte[encoded.length];
    if (!SegmentBytes.decode(encoded, spec, fingerprint, 0).equals(block)) {
      throw new IllegalStateException("segment of " + layout + " does not decode to its block");
    }
  }

  @Benchmark
  public byte[] encode() throws IOException {
    return SegmentBytes.encode(block, fingerprint);
  }

  @Benchmark
  public Block decode() throws IOException {
    return SegmentBytes.decode(encoded, spec, fingerprint, 0);
  }

  /** The reference: the segment's bytes copied once, with nothing checked. */
  @Benchmark
  public void rawCopy(Blackhole bh) {
    System.arraycopy(encoded, 0, copy, 0, encoded.length);
    bh.consume(copy);
  }
}
