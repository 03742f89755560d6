package org.tensorcache.store.rows;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import org.tensorcache.fields.FieldArrays;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.TokenCoding;
import org.tensorcache.store.topk.TopKCodec;

/**
 * Codes one example of a per-token cache, {@code [tokens, ...shape]} of every field, as one byte
 * string, the way the cache's {@link TokenCoding} says: {@link TokenCoding.Plain} puts each field's
 * values little-endian one field after the other; {@link TokenCoding.TopK} hands the teacher's
 * three fields to the {@link TopKCodec}, and gives each token's entries back by log-prob,
 * descending.
 */
public final class RowCodec {
  private final CacheSpec spec;
  private final List<FieldSpec> fields;
  private final TopKCodec topK; // null for plain rows
  private final int plainBytesPerToken;

  private RowCodec(CacheSpec spec) {
    spec.checkPerToken("a row codec");
    this.spec = spec;
    this.fields = spec.fields();
    this.topK =
        spec.tokenCoding() instanceof TokenCoding.TopK t
            ? t.exact() ? TopKCodec.exact(t.vocab(), t.k()) : TopKCodec.compact(t.vocab(), t.k())
            : null;
    int bytes = 0;
    for (FieldSpec f : fields) {
      bytes += f.width() * f.dtype().bytes();
    }
    this.plainBytesPerToken = bytes;
  }

  /** The codec of the per-token cache {@code spec}. */
  public static RowCodec of(CacheSpec spec) {
    return new RowCodec(spec);
  }

  /** The cache whose rows this codes. */
  public CacheSpec spec() {
    return spec;
  }

  /**
   * The bytes of one example of {@code tokens} tokens.
   *
   * @param values per field in spec order, {@code tokens * width} elements of its dtype's Java type
   *     (float32 values must not be NaN)
   */
  public byte[] encode(int tokens, Object[] values) {
    checkValues(tokens, values);
    if (topK != null) {
      return topK.encode(tokens, (int[]) values[0], (float[]) values[1], (float[]) values[2]);
    }
    ByteBuffer out =
        ByteBuffer.allocate(Math.multiplyExact(tokens, plainBytesPerToken))
            .order(ByteOrder.LITTLE_ENDIAN);
    for (int f = 0; f < fields.size(); f++) {
      FieldArrays.write(fields.get(f).dtype(), values[f], 0, tokens * fields.get(f).width(), out);
    }
    return out.array();
  }

  /** Decodes one example of {@code tokens} tokens into new arrays, one per field. */
  public Object[] decode(byte[] row, int tokens) {
    Object[] values = new Object[fields.size()];
    for (int f = 0; f < values.length; f++) {
      values[f] = fields.get(f).dtype().newArray(Math.multiplyExact(tokens, fields.get(f).width()));
    }
    decode(row, 0, row.length, tokens, values, 0);
    return values;
  }

  /**
   * Decodes the {@code tokens} tokens coded in {@code bytes[offset, offset + length)} into {@code
   * dst} (per field, an array of its dtype) from token {@code at} on; bytes that are not such a row
   * are an {@link IllegalArgumentException}.
   */
  public void decode(byte[] bytes, int offset, int length, int tokens, Object[] dst, int at) {
    if (topK != null) {
      int[] ids = (int[]) dst[0];
      float[] logps = (float[]) dst[1];
      topK.decode(bytes, offset, length, tokens, ids, logps, (float[]) dst[2], at);
      byLogProb(ids, logps, at, tokens, topK.k());
      return;
    }
    if ((long) tokens * plainBytesPerToken != length) {
      throw new IllegalArgumentException(
          "row of "
              + length
              + " bytes for "
              + tokens
              + " tokens, expected "
              + (long) tokens * plainBytesPerToken
              + " ("
              + plainBytesPerToken
              + " bytes per token) in cache '"
              + spec.name()
              + "'");
    }
    ByteBuffer in = ByteBuffer.wrap(bytes, offset, length).order(ByteOrder.LITTLE_ENDIAN);
    for (int f = 0; f < fields.size(); f++) {
      int width = fields.get(f).width();
      if ((long) (at + tokens) * width > FieldArrays.length(dst[f])) {
        throw new IllegalArgumentException(
            "field '"
                + fields.get(f).name()
                + "': room for "
                + FieldArrays.length(dst[f])
                + " elements, expected "
                + (long) (at + tokens) * width);
      }
      FieldArrays.read(fields.get(f).dtype(), in, dst[f], at * width, tokens * width);
    }
  }

  /**
   * Puts each token's entries in the order a teacher gives them, log-prob descending and then id
   * ascending, where the codec gives ids ascending: so {@code ids[0]} is the teacher's most likely
   * token, and exact rows come back as they were computed.
   */
  private static void byLogProb(int[] ids, float[] logps, int at, int tokens, int k) {
    long[] keys = new long[k];
    int[] idsBefore = new int[k];
    float[] logpsBefore = new float[k];
    for (int t = at; t < at + tokens; t++) {
      int base = t * k;
      for (int j = 0; j < k; j++) {
        // log-probs are <= 0, so their raw bits ascend as they descend (0 taken as -0); the
        // codec's order, ids ascending, breaks ties
        long descending = (Float.floatToRawIntBits(logps[base + j]) | 0x80000000) ^ 0x80000000;
        keys[j] = descending << 32 | j;
      }
      Arrays.sort(keys);
      System.arraycopy(ids, base, idsBefore, 0, k);
      System.arraycopy(logps, base, logpsBefore, 0, k);
      for (int j = 0; j < k; j++) {
        int from = (int) keys[j];
        ids[base + j] = idsBefore[from];
        logps[base + j] = logpsBefore[from];
      }
    }
  }

  private void checkValues(int tokens, Object[] values) {
    if (tokens < 1) {
      throw new IllegalArgumentException(
          "an example of "
              + tokens
              + " tokens, expected at least 1 in cache '"
              + spec.name()
              + "'");
    }
    if (values == null || values.length != fields.size()) {
      throw new IllegalArgumentException(
          "values of "
              + (values == null ? 0 : values.length)
              + " fields, expected "
              + fields.size()
              + " in cache '"
              + spec.name()
              + "'");
    }
    for (int f = 0; f < values.length; f++) {
      FieldSpec field = fields.get(f);
      long elements = (long) tokens * field.width();
      if (!FieldArrays.isArrayOf(field.dtype(), values[f])
          || FieldArrays.length(values[f]) != elements) {
        throw new IllegalArgumentException(
            "field '"
                + field.name()
                + "': "
                + describe(values[f])
                + ", expected "
                + elements
                + " elements of "
                + field.dtype().safetensorsName()
                + " for "
                + tokens
                + " tokens");
      }
      if (field.dtype().isFloating()) {
        for (int i = 0; i < elements; i++) {
          if (FieldArrays.isNaN(field.dtype(), values[f], i)) {
            throw new IllegalArgumentException(
                "field '" + field.name() + "' holds NaN at token " + i / field.width());
          }
        }
      }
    }
  }

  private static String describe(Object a) {
    return a == null ? "null" : FieldArrays.length(a) + " elements of " + FieldArrays.javaType(a);
  }
}
