package org.tensorcache.store.spec;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Map;
import java.util.regex.Pattern;
import org.tensorcache.fields.FieldSpec;

/**
 * Identifies a cache's values: the SHA-256 of its {@link FingerprintInputs}. Same fingerprint means
 * the same values, shared by every experiment; any change gives a different cache.
 *
 * @param cacheName the name of the cache's spec
 * @param hex the SHA-256 as 64 lowercase hex digits
 */
public record Fingerprint(String cacheName, String hex) {
  private static final Pattern HEX = Pattern.compile("[0-9a-f]{64}");
  private static final Pattern NAME = Pattern.compile("[a-z][a-z0-9_-]{0,63}");

  /** Tags the encoding so a future change of it cannot collide with this one. */
  private static final String DOMAIN = "tensorcache-fingerprint/1";

  /** The flag on a per-token field's rank; ranks are far below it. */
  private static final int PER_TOKEN = 1 << 30;

  /** Validates the name and the digest text. */
  public Fingerprint {
    if (cacheName == null || !NAME.matcher(cacheName).matches()) {
      throw new IllegalArgumentException(
          "cache name '" + cacheName + "' invalid, expected [a-z][a-z0-9_-]{0,63}");
    }
    if (hex == null || !HEX.matcher(hex).matches()) {
      throw new IllegalArgumentException(
          "fingerprint '" + hex + "' invalid, expected 64 lowercase hex digits");
    }
  }

  /** Computes the fingerprint of {@code inputs}. */
  public static Fingerprint of(FingerprintInputs inputs) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      return new Fingerprint(
          inputs.spec().name(), HexFormat.of().formatHex(sha.digest(canonicalBytes(inputs))));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every Java platform", e);
    }
  }

  /** The cache id: {@code <cache name>-<first 16 hex digits>}. */
  public String cacheId() {
    return cacheName + "-" + hex.substring(0, 16);
  }

  /**
   * The unambiguous encoding that is hashed: every string is length-prefixed and every list
   * count-prefixed, so no two different inputs encode to the same bytes.
   */
  static byte[] canonicalBytes(FingerprintInputs in) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream(256);
    try (DataOutputStream out = new DataOutputStream(bytes)) {
      string(out, DOMAIN);
      string(out, in.runnerId());
      string(out, in.runnerVersion());
      string(out, in.weightsDigest());
      string(out, in.datasetDigest());
      out.writeInt(in.runnerParameters().size());
      for (Map.Entry<String, String> e : in.runnerParameters().entrySet()) {
        string(out, e.getKey());
        string(out, e.getValue());
      }
      CacheSpec spec = in.spec();
      string(out, spec.name());
      out.writeLong(spec.n());
      out.writeInt(spec.rangeSize());
      out.writeInt(spec.fields().size());
      for (FieldSpec f : spec.fields()) {
        string(out, f.name());
        string(out, f.dtype().safetensorsName());
        int[] shape = f.shape();
        // a per-token field flags its rank, so fixed-shape caches keep the fingerprints they had
        out.writeInt(f.perToken() ? shape.length | PER_TOKEN : shape.length);
        for (int d : shape) {
          out.writeInt(d);
        }
      }
      if (spec.perToken()) {
        // flagged above, so this tail cannot be confused with a fixed-shape cache's end
        if (spec.tokenCoding() instanceof TokenCoding.TopK t) {
          string(out, "topk");
          out.writeInt(t.vocab());
          out.writeInt(t.k());
          out.writeBoolean(t.exact());
        } else {
          string(out, "plain");
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return bytes.toByteArray();
  }

  private static void string(DataOutputStream out, String s) throws IOException {
    byte[] b = s.getBytes(StandardCharsets.UTF_8);
    out.writeInt(b.length);
    out.write(b);
  }

  /** Throws unless this fingerprint is of a cache named as {@code spec} is. */
  public void checkBelongsTo(CacheSpec spec) {
    if (!spec.name().equals(cacheName)) {
      throw new IllegalArgumentException(
          "fingerprint of cache '"
              + cacheName
              + "' used for cache '"
              + spec.name()
              + "', expected the same name");
    }
  }
}
