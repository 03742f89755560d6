package org.tensorcache.bench.security;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.crypto.Cipher;
import javax.crypto.spec.GCMParameterSpec;
import javax.crypto.spec.SecretKeySpec;
import org.tensorcache.bench.report.Stats;

/**
 * The cipher's share of what TLS adds to a lookup: a batch's request and reply (8 bytes an example
 * each way: a long index out, two floats back) sealed and opened with AES-256-GCM through this
 * JVM's own provider, in records of at most 16 KiB as TLS sends them, on one thread. What TLS costs
 * beyond it is the record layer and the socket's own work.
 */
final class CipherFloor {
  /** TLS's largest record of application data. */
  private static final int RECORD = 16 << 10;

  private CipherFloor() {}

  /** Microseconds per batch of every batch size, each measured after a warm-up of its own. */
  static Map<String, Object> measure(int[] batches, double seconds)
      throws GeneralSecurityException {
    Map<String, Object> out = new LinkedHashMap<>();
    for (int batch : batches) {
      microsPerBatch(batch, seconds / 2); // the JIT's intrinsics first
      out.put(Integer.toString(batch), Stats.round2(microsPerBatch(batch, seconds)));
    }
    return out;
  }

  private static double microsPerBatch(int batch, double seconds) throws GeneralSecurityException {
    Cipher cipher = Cipher.getInstance("AES/GCM/NoPadding");
    SecretKeySpec key = new SecretKeySpec(new byte[32], "AES");
    byte[] iv = new byte[12];
    long nonce = 0;
    byte[] plain = new byte[Math.min(RECORD, batch * 8)];
    byte[] sealed = new byte[plain.length + 16];
    byte[] opened = new byte[plain.length];
    long t0 = System.nanoTime();
    long end = t0 + (long) (seconds * 1e9);
    long batches = 0;
    while (System.nanoTime() < end) {
      for (int direction = 0; direction < 2; direction++) {
        for (int left = batch * 8; left > 0; left -= RECORD) {
          ByteBuffer.wrap(iv).putLong(4, ++nonce); // GCM refuses a nonce used before with the key
          GCMParameterSpec spec = new GCMParameterSpec(128, iv);
          cipher.init(Cipher.ENCRYPT_MODE, key, spec);
          int n = cipher.doFinal(plain, 0, Math.min(RECORD, left), sealed, 0);
          cipher.init(Cipher.DECRYPT_MODE, key, spec);
          cipher.doFinal(sealed, 0, n, opened, 0);
        }
      }
      batches++;
    }
    return (System.nanoTime() - t0) / 1e3 / batches;
  }
}
