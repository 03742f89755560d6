package org.tensorcache.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.tensorcache.actors.client.SessionClient;
import org.tensorcache.actors.client.TensorCacheClient;
import org.tensorcache.actors.client.TrainingBatch;
import org.tensorcache.model.data.Example;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.PreferenceExample;
import org.tensorcache.model.lm.TinyLm;
import org.tensorcache.model.train.DpoConfig;
import org.tensorcache.model.train.DpoTrainer;
import org.tensorcache.model.train.RefLogprobs;
import org.tensorcache.model.train.StepResult;

/**
 * The demo's trainer: DPO on a policy initialised from the reference model, its reference log-probs
 * taken from the cache through a trainer session. It saves a checkpoint of the policy every few
 * steps, as a real trainer would, so that it can be restarted from the last one.
 */
final class DpoDemo {
  /** What the trainer saw at one step: the step, its indices and their cached values. */
  record Served(long step, long[] indices, float[] chosen, float[] rejected) {
    boolean sameAs(Served o) {
      return step == o.step
          && Arrays.equals(indices, o.indices)
          && Arrays.equals(chosen, o.chosen)
          && Arrays.equals(rejected, o.rejected);
    }
  }

  private final ExampleSet data;
  private final Path checkpointDir;
  private final int checkpointEvery;
  final List<Served> served = new ArrayList<>();
  final List<Float> losses = new ArrayList<>();
  long checkpointStep;

  DpoDemo(ExampleSet data, Path checkpointDir, int checkpointEvery) {
    this.data = data;
    this.checkpointDir = checkpointDir;
    this.checkpointEvery = checkpointEvery;
  }

  /**
   * Trains on the session's steps until {@code untilStep}, starting from {@code policy}'s weights;
   * saves a checkpoint every {@code checkpointEvery} steps.
   */
  void train(TinyLm policy, SessionClient session, long untilStep) throws IOException {
    try (DpoTrainer trainer = new DpoTrainer(policy, DpoConfig.DEFAULTS)) {
      while (session.nextStep() < untilStep) {
        TrainingBatch batch = session.next();
        float[] chosen = batch.values().floats("chosen_logp");
        float[] rejected = batch.values().floats("rejected_logp");
        served.add(new Served(batch.step(), batch.indices(), chosen, rejected));
        List<PreferenceExample> examples = new ArrayList<>(batch.indices().length);
        for (long i : batch.indices()) {
          examples.add(Example.as(PreferenceExample.class, data.get(i), "dpo-demo"));
        }
        StepResult result = trainer.step(examples, new RefLogprobs(chosen, rejected));
        losses.add(result.loss());
        if ((batch.step() + 1) % checkpointEvery == 0) {
          trainer.policy().save(checkpointDir);
          checkpointStep = batch.step() + 1;
        }
      }
    }
  }

  /** The policy saved at the last checkpoint. */
  TinyLm lastCheckpoint() throws IOException {
    return TinyLm.load(checkpointDir);
  }

  /** Opens the demo's session on {@code client}. */
  static SessionClient session(
      TensorCacheClient client, String cacheId, String runId, long seed, int globalBatch) {
    return client.session(cacheId, runId, 0, 1, seed, globalBatch);
  }
}
