package org.tensorcache.bench;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;
import org.tensorcache.actors.client.Batch;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.bench.fixture.RunSize;
import org.tensorcache.bench.report.Stats;
import org.tensorcache.model.data.ExampleSet;
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
  private DpoBench() {}

  static Map<String, Object> run(
      TensorCacheClient client, String cacheId, ExampleSet data, Path modelDir, RunSize size)
      throws Exception {
    int steps = size.pick(30, 10, 1);
    int warmUp = size.pick(3, 3, 0);
    int batch = 32;
    long[] cached = new long[steps];
    long[] computed = new long[steps];
    try (TinyLm reference = TinyLm.load(modelDir);
        DpoTrainer withCache = new DpoTrainer(reference, DpoConfig.DEFAULTS);
        DpoTrainer withModel = new DpoTrainer(reference, DpoConfig.DEFAULTS);
        ReferenceLogprobRunner refRunner =
            new ReferenceLogprobRunner(TinyLm.load(modelDir), batch, 512)) {
      ComputedReferenceLogprobs uncached = new ComputedReferenceLogprobs(refRunner, data);
      SplittableRandom random = new SplittableRandom(3);
      for (int step = -warmUp; step < steps; step++) {
        long[] indices = new long[batch];
        for (int i = 0; i < batch; i++) {
          indices[i] = random.nextInt(data.size());
        }
        var examples = ClusterBench.examples(data, indices);
        long t0 = System.nanoTime();
        Batch values = client.lookup(cacheId, indices);
        withCache.step(
            examples,
            new RefLogprobs(values.floats("chosen_logp"), values.floats("rejected_logp")));
        long t1 = System.nanoTime();
        withModel.step(examples, uncached);
        long t2 = System.nanoTime();
        if (step >= 0) { // after the warm-up steps
          cached[step] = t1 - t0;
          computed[step] = t2 - t1;
        }
      }
    }
    Arrays.sort(cached);
    Arrays.sort(computed);
    double c = cached[steps / 2] / 1e6;
    double m = computed[steps / 2] / 1e6;
    System.out.printf(
        "dpo step (B=32): cached %.1f ms, computed reference %.1f ms, ratio %.2f (target >= 1.25)%n",
        c, m, m / c);
    Map<String, Object> row = new LinkedHashMap<>();
    row.put("batch", batch);
    row.put("steps", steps);
    row.put("cached_step_ms_p50", Stats.round2(c));
    row.put("computed_step_ms_p50", Stats.round2(m));
    row.put("ratio", Stats.round2(m / c));
    return row;
  }
}
