package org.tensorcache.model.data;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.SplittableRandom;

/**
 * A seeded generator of a small but learnable preference set: arithmetic and string tasks where
 * {@code chosen} is the right answer and {@code rejected} a plausible wrong one. The same seed and
 * size always give the same bytes.
 */
public final class SyntheticPreferences {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String LETTERS = "abcdefghijklmnopqrstuvwxyz";

  private SyntheticPreferences() {}

  /** Writes {@code n} examples as JSONL to {@code file} (atomically: temp file, then rename). */
  public static void write(Path file, long seed, int n) throws IOException {
    if (n < 1) {
      throw new IllegalArgumentException("example count " + n + " invalid, expected >= 1");
    }
    Path parent = file.toAbsolutePath().getParent();
    Files.createDirectories(parent);
    Path tmp = Files.createTempFile(parent, ".tmp-", ".jsonl");
    SplittableRandom random = new SplittableRandom(seed);
    try (BufferedWriter out = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
      for (int i = 0; i < n; i++) {
        String[] example = example(random);
        ObjectNode line = JSON.createObjectNode();
        line.put("prompt", example[0]).put("chosen", example[1]).put("rejected", example[2]);
        out.write(JSON.writeValueAsString(line));
        out.write('\n');
      }
    }
    Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  /** One example as {prompt, chosen, rejected}. */
  static String[] example(SplittableRandom random) {
    return switch (random.nextInt(4)) {
      case 0 -> addition(random);
      case 1 -> subtraction(random);
      case 2 -> reverse(random);
      default -> upper(random);
    };
  }

  private static String[] addition(SplittableRandom random) {
    int a = random.nextInt(1000);
    int b = random.nextInt(1000);
    return new String[] {a + "+" + b + "=", Integer.toString(a + b), wrong(random, a + b)};
  }

  private static String[] subtraction(SplittableRandom random) {
    int a = random.nextInt(1000);
    int b = random.nextInt(a + 1);
    return new String[] {a + "-" + b + "=", Integer.toString(a - b), wrong(random, a - b)};
  }

  /** A wrong answer close to the right one: off by 1 to 10, or by a power of ten. */
  private static String wrong(SplittableRandom random, int right) {
    int delta =
        random.nextBoolean() ? 1 + random.nextInt(10) : (int) Math.pow(10, random.nextInt(3));
    int wrong = random.nextBoolean() || right < delta ? right + delta : right - delta;
    return Integer.toString(wrong);
  }

  private static String[] reverse(SplittableRandom random) {
    String word = word(random);
    String reversed = new StringBuilder(word).reverse().toString();
    String wrong = reversed.equals(word) ? word + word.charAt(0) : word;
    return new String[] {"reverse " + word + ":", reversed, wrong};
  }

  private static String[] upper(SplittableRandom random) {
    String word = word(random);
    String wrong = Character.toUpperCase(word.charAt(0)) + word.substring(1);
    return new String[] {"upper " + word + ":", word.toUpperCase(), wrong};
  }

  private static String word(SplittableRandom random) {
    int length = 2 + random.nextInt(7);
    StringBuilder sb = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      sb.append(LETTERS.charAt(random.nextInt(LETTERS.length())));
    }
    return sb.toString();
  }
}
