package org.tensorcache.store.topk;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class TopKCodecTest {
  private static final int VOCAB = 32_000;
  private static final int K = 64;
  private static final int TOKENS = 40;

  @Test
  void compactRowsKeepTheIdsAndTheDistributionWithinTheBound() {
    TeacherTokens row = TeacherTokens.sample(7, TOKENS, VOCAB, K);
    TopKCodec codec = TopKCodec.compact(VOCAB, K);
    byte[] bytes = codec.encode(TOKENS, row.ids(), row.logps(), row.tails());

    TeacherTokens back = decode(codec, bytes, TOKENS);
    double bound = TopKCodec.EXPECTED_KL;
    for (int t = 0; t < TOKENS; t++) {
      assertEquals(idSet(row.ids(), t), idSet(back.ids(), t), "the same ids at token " + t);
      double kl = row.klTo(t, back);
      assertTrue(kl < 3 * bound, "token " + t + ": KL " + kl + " against about " + bound);
      assertEquals(0, back.logSumExp(t), 1e-5, "the decoded masses of token " + t + " sum to 1");
      for (int j = 1; j < K; j++) {
        assertTrue(back.ids()[t * K + j - 1] < back.ids()[t * K + j], "ids ascending");
      }
    }
    int exactBytes =
        TopKCodec.exact(VOCAB, K).encode(TOKENS, row.ids(), row.logps(), row.tails()).length;
    assertTrue(
        bytes.length < 0.4 * exactBytes,
        bytes.length + " bytes compact, " + exactBytes + " exact: expected less than 40%");
    assertArrayEquals(bytes, codec.encode(TOKENS, row.ids(), row.logps(), row.tails()));
  }

  @Test
  void exactRowsComeBackBitForBit() {
    TeacherTokens row = TeacherTokens.sample(8, TOKENS, VOCAB, K);
    TopKCodec codec = TopKCodec.exact(VOCAB, K);
    byte[] bytes = codec.encode(TOKENS, row.ids(), row.logps(), row.tails());
    TeacherTokens back = decode(codec, bytes, TOKENS);
    TeacherTokens sorted = row.byId();
    assertArrayEquals(sorted.ids(), back.ids());
    assertArrayEquals(sorted.logps(), back.logps());
    assertArrayEquals(row.tails(), back.tails());
  }

  @Test
  void aRowDecodesAtAnyTokenPositionOfTheArrays() {
    TeacherTokens row = TeacherTokens.sample(9, 3, VOCAB, K);
    TopKCodec codec = TopKCodec.exact(VOCAB, K);
    byte[] bytes = codec.encode(3, row.ids(), row.logps(), row.tails());
    byte[] framed = new byte[bytes.length + 5];
    System.arraycopy(bytes, 0, framed, 2, bytes.length);
    int[] ids = new int[5 * K];
    float[] logps = new float[5 * K];
    float[] tails = new float[5];
    codec.decode(framed, 2, bytes.length, 3, ids, logps, tails, 2);
    assertArrayEquals(row.byId().ids(), Arrays.copyOfRange(ids, 2 * K, 5 * K));
    assertArrayEquals(row.tails(), Arrays.copyOfRange(tails, 2, 5));
  }

  @Test
  void badTokensAreRefusedNamingTheValue() {
    TopKCodec codec = new TopKCodec(10, 2, 255, false);
    float[] tail = {-1f};
    var twice =
        assertThrows(
            IllegalArgumentException.class,
            () -> codec.encode(1, new int[] {3, 3}, new float[] {-1, -2}, tail));
    assertTrue(twice.getMessage().contains("id 3 twice"), twice.getMessage());
    var outside =
        assertThrows(
            IllegalArgumentException.class,
            () -> codec.encode(1, new int[] {3, 10}, new float[] {-1, -2}, tail));
    assertTrue(outside.getMessage().contains("id 10, expected one in [0, 10)"));
    var positive =
        assertThrows(
            IllegalArgumentException.class,
            () -> codec.encode(1, new int[] {3, 4}, new float[] {0.5f, -2}, tail));
    assertTrue(positive.getMessage().contains("log-prob of id 3 is 0.5"));
    var nan =
        assertThrows(
            IllegalArgumentException.class,
            () -> codec.encode(1, new int[] {3, 4}, new float[] {-1, -2}, new float[] {Float.NaN}));
    assertTrue(nan.getMessage().contains("tail log-prob is NaN"));
    var k = assertThrows(IllegalArgumentException.class, () -> new TopKCodec(10, 11, 255, false));
    assertTrue(k.getMessage().contains("top-k 11, expected 1..10"));
  }

  @Test
  void bytesThatAreNotExactlyARowAreRefused() {
    TeacherTokens row = TeacherTokens.sample(10, 4, VOCAB, K);
    for (boolean exact : new boolean[] {false, true}) {
      TopKCodec codec = new TopKCodec(VOCAB, K, 255, exact);
      byte[] bytes = codec.encode(4, row.ids(), row.logps(), row.tails());
      byte[] longer = Arrays.copyOf(bytes, bytes.length + 1);
      int[] ids = new int[4 * K];
      float[] logps = new float[4 * K];
      float[] tails = new float[4];
      assertThrows(
          IllegalArgumentException.class,
          () -> codec.decode(bytes, 0, bytes.length - 1, 4, ids, logps, tails, 0),
          "a truncated row");
      var extra =
          assertThrows(
              IllegalArgumentException.class,
              () -> codec.decode(longer, 0, longer.length, 4, ids, logps, tails, 0));
      assertTrue(extra.getMessage().contains("ends after " + bytes.length), extra.getMessage());
    }
  }

  private static TeacherTokens decode(TopKCodec codec, byte[] bytes, int tokens) {
    int[] ids = new int[tokens * K];
    float[] logps = new float[tokens * K];
    float[] tails = new float[tokens];
    codec.decode(bytes, 0, bytes.length, tokens, ids, logps, tails, 0);
    return new TeacherTokens(K, ids, logps, tails);
  }

  private static Set<Integer> idSet(int[] ids, int t) {
    Set<Integer> set = new HashSet<>();
    for (int j = t * K; j < (t + 1) * K; j++) {
      set.add(ids[j]);
    }
    return set;
  }
}
