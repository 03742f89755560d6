package org.tensorcache.cli;

import java.util.List;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.runner.TokenOutput;
import org.tensorcache.model.runner.TokenRunner;
import org.tensorcache.store.rows.RowBlock;
import org.tensorcache.store.rows.RowCodec;
import org.tensorcache.store.spec.CacheSpec;

/**
 * The ranges of a per-token cache: rows, computed by a {@link TokenRunner} and coded as the cache's
 * spec says.
 */
final class RowRanges implements LocalRanges<RowBlock> {
  private final TokenRunner runner;
  private final CacheSpec spec;
  private final RowCodec codec;

  RowRanges(TokenRunner runner, CacheSpec spec) {
    if (!runner.fields().equals(spec.fields())) {
      throw new IllegalArgumentException(
          "runner '"
              + runner.id()
              + "' computes "
              + runner.fields()
              + ", cache '"
              + spec.name()
              + "' holds "
              + spec.fields());
    }
    this.runner = runner;
    this.spec = spec;
    this.codec = RowCodec.of(spec);
  }

  @Override
  public RowBlock empty(int range) {
    return RowBlock.empty(spec, range);
  }

  @Override
  public long start(RowBlock values) {
    return values.start();
  }

  @Override
  public int length(RowBlock values) {
    return values.length();
  }

  @Override
  public int presentCount(RowBlock values) {
    return values.presentCount();
  }

  @Override
  public boolean isPresent(RowBlock values, long index) {
    return values.isPresent(index);
  }

  @Override
  public void compute(List<Example> batch, RowBlock values) {
    TokenOutput out = runner.run(batch);
    Object[] fields = new Object[spec.fields().size()];
    for (int row = 0; row < out.size(); row++) {
      long index = out.index(row);
      if (!values.isPresent(index)) {
        for (int f = 0; f < fields.length; f++) {
          fields[f] = out.value(f, row);
        }
        values.put(index, out.tokens(row), codec.encode(out.tokens(row), fields));
      }
    }
  }

  @Override
  public void close() {
    runner.close();
  }
}
