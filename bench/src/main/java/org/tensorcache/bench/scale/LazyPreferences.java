package org.tensorcache.bench.scale;

import java.nio.file.Path;
import java.util.AbstractList;
import java.util.Objects;
import java.util.RandomAccess;
import org.tensorcache.bench.fixture.SyntheticRunner;
import org.tensorcache.model.data.ExampleSet;
import org.tensorcache.model.data.PreferenceExample;

/**
 * A data set of {@code n} examples that makes the example of an index when it is asked for, so that
 * ten million examples need not exist as objects: the synthetic runner only reads the index.
 *
 * <p>{@link ExampleSet}'s constructor copies its list with {@code List.copyOf}, which asks this
 * list for every element; so that the copy stays small, every example shares the same three strings
 * (about 36 bytes an example with the copy's reference to it).
 */
public final class LazyPreferences extends AbstractList<PreferenceExample> implements RandomAccess {
  private static final String PROMPT = "synthetic prompt";
  private static final String CHOSEN = "chosen";
  private static final String REJECTED = "rejected";

  private final int n;

  private LazyPreferences(int n) {
    if (n < 1) {
      throw new IllegalArgumentException("n " + n + " invalid, expected at least 1");
    }
    this.n = n;
  }

  /**
   * A data set of {@code n} synthetic examples named {@code name}; its digest depends on both, so
   * caches of different sizes or names never share a fingerprint.
   */
  public static ExampleSet dataset(String name, int n) {
    return new ExampleSet(
        Path.of(name + "-n" + n + ".synthetic"),
        new LazyPreferences(n),
        SyntheticRunner.sha256("lazy-preferences " + name + " n=" + n));
  }

  @Override
  public PreferenceExample get(int index) {
    Objects.checkIndex(index, n);
    return new PreferenceExample(index, PROMPT, CHOSEN, REJECTED);
  }

  @Override
  public int size() {
    return n;
  }
}
