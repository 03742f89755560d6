package org.tensorcache.actors.lookup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.tensorcache.store.spec.CacheSpec;
import org.tensorcache.store.spec.TokenCoding;

/**
 * A GET or NEXT of a per-token cache in a protocol version that has no ragged values is refused
 * before anything is looked up or a step is taken, naming the field, the cache and the version.
 */
class PerTokenRefusalTest {
  private static final CacheSpec TEACHER =
      CacheSpec.teacher("teacher", 12, 3, new TokenCoding.TopK(800, 5, false));

  @Test
  void everyVersionUpToFourIsRefusedNamingIt() {
    for (byte version = 1; version <= 4; version++) {
      byte v = version;
      var refused =
          assertThrows(
              IllegalArgumentException.class,
              () -> LookupWire.checkCarries(v, "teacher-0123456789abcdef", TEACHER, 2));
      assertEquals(
          "field 'teacher_ids' of cache 'teacher-0123456789abcdef' is per-token: protocol version"
              + " 5 is needed, the request is version "
              + version,
          refused.getMessage());
    }
  }
}
