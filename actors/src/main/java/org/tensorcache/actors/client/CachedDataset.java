package org.tensorcache.actors.client;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.dataset.Batch;
import ai.djl.training.dataset.Dataset;
import ai.djl.translate.Batchifier;
import ai.djl.util.Progress;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * A DJL {@link Dataset} over a trainer session: each batch's data is the step's example indices
 * ({@code int64 [B]}), its labels the cached fields in spec order ({@code [B, ...shape]}: F32, I32
 * and I64 as they are, F16 and BF16 as float32), so a DJL training loop consumes the cached
 * reference log-probs as labels.
 */
public final class CachedDataset implements Dataset {
  private final SessionClient session;
  private final long steps;

  /** The next {@code steps} steps of {@code session}. */
  public CachedDataset(SessionClient session, long steps) {
    if (steps < 1) {
      throw new IllegalArgumentException("steps " + steps + " invalid, expected >= 1");
    }
    this.session = session;
    this.steps = steps;
  }

  @Override
  public Iterable<Batch> getData(NDManager manager) {
    return () ->
        new Iterator<>() {
          private long served;

          @Override
          public boolean hasNext() {
            return served < steps;
          }

          @Override
          public Batch next() {
            if (!hasNext()) {
              throw new NoSuchElementException();
            }
            TrainingBatch b = session.next();
            served++;
            return toBatch(manager.newSubManager(), b, served, steps);
          }
        };
  }

  private static Batch toBatch(NDManager m, TrainingBatch b, long progress, long total) {
    int size = b.indices().length;
    NDList labels = new NDList();
    var spec = b.values().spec();
    for (int f = 0; f < spec.fields().size(); f++) {
      var field = spec.fields().get(f);
      long[] dims = new long[field.shape().length + 1];
      dims[0] = size;
      for (int d = 0; d < field.shape().length; d++) {
        dims[d + 1] = field.shape()[d];
      }
      NDArray values = create(m, b.values(), field.name(), new Shape(dims));
      values.setName(field.name());
      labels.add(values);
    }
    NDList data = new NDList(m.create(b.indices(), new Shape(size)));
    return new Batch(m, data, labels, size, Batchifier.STACK, Batchifier.STACK, progress, total);
  }

  /** F32, I32 and I64 as they are; F16 and BF16 as the float32 values they encode. */
  private static NDArray create(
      NDManager m, org.tensorcache.actors.client.Batch values, String field, Shape shape) {
    Object v = values.values()[values.spec().fieldIndex(field)];
    if (v instanceof int[] ints) {
      return m.create(ints, shape);
    }
    if (v instanceof long[] longs) {
      return m.create(longs, shape);
    }
    return m.create(v instanceof float[] floats ? floats : values.asFloats(field), shape);
  }

  @Override
  public void prepare(Progress progress) {
    // nothing to download or build: the values are in the cache
  }
}
