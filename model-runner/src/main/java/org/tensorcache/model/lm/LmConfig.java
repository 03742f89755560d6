package org.tensorcache.model.lm;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Sizes and seed of the {@link TinyLm}: token embedding, {@code layers} stacked LSTM layers of
 * {@code hiddenSize}, and a linear head over the vocabulary.
 */
public record LmConfig(int vocabSize, int embedSize, int hiddenSize, int layers, int seed) {
  /** Checks every size, naming the bad one. */
  public LmConfig {
    positive("vocab_size", vocabSize);
    positive("embed_size", embedSize);
    positive("hidden_size", hiddenSize);
    if (layers < 2 || layers > 16) {
      throw new IllegalArgumentException("layers " + layers + " invalid, expected 2..16");
    }
  }

  private static void positive(String name, int value) {
    if (value < 1 || value > 65_536) {
      throw new IllegalArgumentException(name + " " + value + " invalid, expected 1..65536");
    }
  }

  /** The sizes as named strings, for fingerprints and the model's config file. */
  public Map<String, String> asParameters() {
    Map<String, String> p = new LinkedHashMap<>();
    p.put("lm.vocab_size", Integer.toString(vocabSize));
    p.put("lm.embed_size", Integer.toString(embedSize));
    p.put("lm.hidden_size", Integer.toString(hiddenSize));
    p.put("lm.layers", Integer.toString(layers));
    p.put("lm.seed", Integer.toString(seed));
    return p;
  }
}
