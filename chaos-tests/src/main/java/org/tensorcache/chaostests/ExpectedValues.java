package org.tensorcache.chaostests;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.tensorcache.actors.cache.CacheDefinition;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.segment.SegmentRejectedException;
import org.tensorcache.store.segment.SegmentStore;

/** The single-process values ({@code fill --local}) that every value of a run must equal. */
final class ExpectedValues {
  private final float[][] values;
  private final int[] widths;
  private final long n;

  private ExpectedValues(float[][] values, int[] widths, long n) {
    this.values = values;
    this.widths = widths;
    this.n = n;
  }

  /** Reads every segment of the reference cache; all must be complete. */
  static ExpectedValues load(CacheDefinition ref) throws IOException {
    Set<Integer> all = new HashSet<>();
    for (int r = 0; r < ref.spec().rangeCount(); r++) {
      all.add(r);
    }
    return load(ref, all);
  }

  /**
   * Reads the segments of {@code ranges} of a cache, which must be complete: the values that
   * lookups of their indices must return (other indices have no reference values).
   */
  static ExpectedValues load(CacheDefinition ref, Set<Integer> ranges) throws IOException {
    var spec = ref.spec();
    int fields = spec.fields().size();
    float[][] values = new float[fields][];
    int[] widths = new int[fields];
    for (int f = 0; f < fields; f++) {
      widths[f] = spec.fields().get(f).width();
      values[f] = new float[(int) spec.n() * widths[f]];
    }
    SegmentStore<Block> store = SegmentStore.open(ref.segmentDir(), spec, ref.fingerprint());
    for (int r : ranges) {
      Block b =
          store
              .read(r)
              .filter(Block::isComplete)
              .orElseThrow(
                  () -> new IllegalStateException("reference segment of range " + r + " missing"));
      for (int f = 0; f < fields; f++) {
        b.copyRawValues(f, 0, values[f], (int) b.start() * widths[f], b.length() * widths[f]);
      }
    }
    return new ExpectedValues(values, widths, spec.n());
  }

  /** The reference values of {@code indices}, per field, in request order. */
  float[][] valuesOf(long[] indices) {
    float[][] out = new float[widths.length][];
    for (int f = 0; f < widths.length; f++) {
      out[f] = new float[indices.length * widths[f]];
      for (int i = 0; i < indices.length; i++) {
        System.arraycopy(values[f], (int) indices[i] * widths[f], out[f], i * widths[f], widths[f]);
      }
    }
    return out;
  }

  /** Values of {@code batch} that differ from the reference in any bit. */
  long mismatches(Batch batch) {
    long wrong = 0;
    for (int i = 0; i < batch.indices().length; i++) {
      long index = batch.indices()[i];
      for (int f = 0; f < widths.length; f++) {
        for (int k = 0; k < widths[f]; k++) {
          float got = ((float[]) batch.values()[f])[i * widths[f] + k];
          float want = values[f][(int) index * widths[f] + k];
          if (Float.floatToRawIntBits(got) != Float.floatToRawIntBits(want)) {
            wrong++;
          }
        }
      }
    }
    return wrong;
  }

  /** Examples lost (range without a verified complete segment) and wrong (any bit differs). */
  record SegmentCheck(long lost, long wrong, List<Integer> rejectedRanges) {}

  /** Compares the persisted segments of {@code cache} with the reference, example by example. */
  SegmentCheck checkSegments(CacheDefinition cache) throws IOException {
    var spec = cache.spec();
    // read only: the directory may be an object store's, whose temporary files are not ours
    SegmentStore<Block> store = SegmentStore.at(cache.segmentDir(), spec, cache.fingerprint());
    long lost = 0;
    long wrong = 0;
    List<Integer> rejected = new ArrayList<>();
    for (int r = 0; r < spec.rangeCount(); r++) {
      Optional<Block> block;
      try {
        block = store.read(r);
      } catch (SegmentRejectedException e) {
        rejected.add(r);
        block = Optional.empty();
      }
      if (block.isEmpty()) {
        lost += Math.min(spec.rangeSize(), n - (long) r * spec.rangeSize());
        continue;
      }
      Block b = block.get();
      lost += b.length() - b.presentCount();
      for (int f = 0; f < widths.length; f++) {
        float[] got = new float[b.length() * widths[f]];
        b.copyRawValues(f, 0, got, 0, got.length);
        int off = (int) b.start() * widths[f];
        for (int k = 0; k < got.length; k++) {
          if (b.isPresent(b.start() + k / widths[f])
              && Float.floatToRawIntBits(got[k]) != Float.floatToRawIntBits(values[f][off + k])) {
            wrong++;
          }
        }
      }
    }
    return new SegmentCheck(lost, wrong, rejected);
  }
}
