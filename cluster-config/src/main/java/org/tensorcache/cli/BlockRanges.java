package org.tensorcache.cli;

import java.util.List;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.runner.ModelRunner;
import org.tensorcache.model.runner.RunnerOutput;
import org.tensorcache.store.block.Block;
import org.tensorcache.store.spec.CacheSpec;

/** The ranges of a cache of fixed-shape fields: blocks, computed by a {@link ModelRunner}. */
record BlockRanges(ModelRunner runner, CacheSpec spec) implements LocalRanges<Block> {
  @Override
  public Block empty(int range) {
    return Block.empty(spec, range);
  }

  @Override
  public long start(Block values) {
    return values.start();
  }

  @Override
  public int length(Block values) {
    return values.length();
  }

  @Override
  public int presentCount(Block values) {
    return values.presentCount();
  }

  @Override
  public boolean isPresent(Block values, long index) {
    return values.isPresent(index);
  }

  @Override
  public void compute(List<Example> batch, Block values) {
    RunnerOutput out = runner.run(batch);
    for (int row = 0; row < out.size(); row++) {
      if (!values.isPresent(out.index(row))) {
        values.put(out.index(row), out.row(row));
      }
    }
  }

  @Override
  public void close() {
    runner.close();
  }
}
