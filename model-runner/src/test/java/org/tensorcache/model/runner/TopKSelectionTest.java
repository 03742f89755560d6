package org.tensorcache.model.runner;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/**
 * The selection on constructed logits with ties (at the K-th place, inside the K, a whole row
 * equal, K = V) equals PyTorch's stable sort ({@code ties} of {@code expected-topk.json}), and a
 * host brute force on random logits with many ties.
 */
class TopKSelectionTest {
  private static final double TOLERANCE = 1e-5;

  @Test
  void constructedTiesGoToTheLowestIds() throws Exception {
    JsonNode ties =
        new ObjectMapper()
            .readTree(Path.of("src/test/resources/byo/expected-topk.json").toFile())
            .get("ties");
    JsonNode rows = ties.get("logits");
    int n = rows.size();
    int v = rows.get(0).size();
    float[] logits = new float[n * v];
    for (int r = 0; r < n; r++) {
      for (int c = 0; c < v; c++) {
        logits[r * v + c] = rows.get(r).get(c).floatValue();
      }
    }
    int checked = 0;
    try (NDManager m = NDManager.newBaseManager()) {
      for (JsonNode c : ties.get("cases")) {
        int k = c.get("k").intValue();
        TopKSelection.Result got =
            new TopKSelection(k, c.get("temperature").floatValue())
                .select(m.create(logits, new Shape(n, v)));
        for (int r = 0; r < n; r++) {
          String where = "k " + k + " row " + r;
          int[] ids = Arrays.copyOfRange(got.ids(), r * k, r * k + k);
          assertArrayEquals(ints(c.get("ids").get(r)), ids, where);
          for (int j = 0; j < k; j++) {
            double expected = c.get("logps").get(r).get(j).doubleValue();
            assertEquals(expected, got.logps()[r * k + j], tolerance(expected), where);
          }
          JsonNode tail = c.get("tails").get(r);
          if (tail.isTextual()) {
            assertEquals(Float.NEGATIVE_INFINITY, got.tails()[r], where);
          } else {
            assertEquals(tail.doubleValue(), got.tails()[r], tolerance(tail.doubleValue()), where);
          }
          checked++;
        }
      }
    }
    assertEquals(20, checked);
  }

  @Test
  void randomLogitsWithManyTiesEqualAHostBruteForce() {
    java.util.Random random = new java.util.Random(11);
    int n = 40;
    int v = 50;
    float[] logits = new float[n * v];
    for (int i = 0; i < logits.length; i++) {
      logits[i] = random.nextInt(6) * 0.5f; // six values in fifty ids: ties everywhere
    }
    try (NDManager m = NDManager.newBaseManager()) {
      for (int k : new int[] {1, 4, 9, 50}) {
        TopKSelection.Result got =
            new TopKSelection(k, 1.5f).select(m.create(logits, new Shape(n, v)));
        float[] logp = m.create(logits, new Shape(n, v)).div(1.5f).logSoftmax(-1).toFloatArray();
        boolean boundaryTie = false;
        for (int r = 0; r < n; r++) {
          Integer[] order = new Integer[v];
          for (int i = 0; i < v; i++) {
            order[i] = i;
          }
          int row = r * v;
          Arrays.sort(
              order,
              (a, b) ->
                  logp[row + a] != logp[row + b]
                      ? Float.compare(logp[row + b], logp[row + a])
                      : a - b);
          double rest = 0;
          for (int j = k; j < v; j++) {
            rest += Math.exp(logp[row + order[j]]);
          }
          boundaryTie |= k < v && logp[row + order[k - 1]] == logp[row + order[k]];
          for (int j = 0; j < k; j++) {
            assertEquals(order[j], got.ids()[r * k + j], "k " + k + " row " + r + " place " + j);
            assertEquals(logp[row + order[j]], got.logps()[r * k + j]);
          }
          double tail = k == v ? Double.NEGATIVE_INFINITY : Math.log(rest);
          assertEquals(tail, got.tails()[r], TOLERANCE, "k " + k + " row " + r);
        }
        assertTrue(k == v || boundaryTie, "no tie at the K-th place for k " + k);
      }
    }
  }

  /** Float32 rounding: {@link #TOLERANCE} relative above 1. */
  private static double tolerance(double expected) {
    return TOLERANCE * Math.max(1, Math.abs(expected));
  }

  private static int[] ints(JsonNode a) {
    int[] out = new int[a.size()];
    for (int i = 0; i < out.length; i++) {
      out[i] = a.get(i).intValue();
    }
    return out;
  }
}
