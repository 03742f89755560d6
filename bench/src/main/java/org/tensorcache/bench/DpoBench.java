package org.tensorcache.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.bench.fixture.Rounds;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.report.Table;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.PreferenceExample;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.model.runner.ReferenceLogprobRunner;
import org.tensorcache.model.train.ComputedReferenceLogprobs;
import org.tensorcache.model.train.DpoConfig;
import org.tensorcache.model.train.DpoTrainer;
import org.tensorcache.model.train.RefLogprobs;

/**
 * A DPO step whose reference log-probs come from the cache, next to one that runs the reference
 * model's forward pass for them, on the same batches, alternating.
 */
final class DpoBench {
  private static final int BATCH = 32;

  private DpoBench() {}

  static Map<String, Object> run(
      TensorCacheClient client, String cacheId, ExampleSet data, Path modelDir, RunSize size)
      throws Exception {
    int steps = size.pick(30, 10, 1);
    long[] indices = new long[BATCH];
    List<PreferenceExample> examples = new ArrayList<>();
    SplittableRandom random = new SplittableRandom(3);
    try (TinyLm reference = TinyLm.load(modelDir);
        DpoTrainer withCache = new DpoTrainer(reference, DpoConfig.DEFAULTS);
        DpoTrainer withModel = new DpoTrainer(reference, DpoConfig.DEFAULTS);
        ReferenceLogprobRunner refRunner =
            new ReferenceLogprobRunner(TinyLm.load(modelDir), BATCH, 512)) {
      ComputedReferenceLogprobs uncached = new ComputedReferenceLogprobs(refRunner, data);
      Rounds t =
          Rounds.time(
              size.pick(3, 3, 0),
              0,
              steps,
              1,
              round -> {
                examples.clear();
                for (int i = 0; i < BATCH; i++) {
                  indices[i] = random.nextInt(data.size());
                  examples.add(Example.as(PreferenceExample.class, data.get(indices[i]), "dpo"));
                }
              },
              Rounds.NOTHING,
              i -> {
                Batch values = client.lookup(cacheId, indices);
                withCache.step(
                    examples,
                    new RefLogprobs(values.floats("chosen_logp"), values.floats("rejected_logp")));
              },
              i -> withModel.step(examples, uncached));
      double cached = t.at(0, 0.5) / 1e6;
      double computed = t.at(1, 0.5) / 1e6;
      return new Table("dpo step, ms (p50)")
          .col("batch", "B", "%3d")
          .json("steps")
          .col("cached_step_ms_p50", "cached", "%8.1f")
          .col("computed_step_ms_p50", "computed reference", "%18.1f")
          .col("ratio", "%6.2f")
          .col("ratio_target", "target", ">= %.2f")
          .row(BATCH, steps, cached, computed, computed / cached, 1.25)
          .print()
          .get(0);
    }
  }
}
