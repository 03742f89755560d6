package org.tensorcache.actors.cache;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import org.tensorcache.store.block.Block;

/**
 * Arbitrary bytes as a replicated block ({@link BlockCodec#decode}): a block, or an {@link
 * IllegalArgumentException} that says what is wrong, never another exception. The encoding is
 * canonical, so a block decoded encodes to the very same bytes.
 */
class BlockCodecFuzzTest {
  @FuzzTest(maxDuration = "3m")
  void decode(byte[] bytes) {
    Block block;
    try {
      block = BlockCodec.decode(bytes);
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage() != null && !e.getMessage().isEmpty(), e.toString());
      return;
    }
    assertArrayEquals(bytes, BlockCodec.encode(block), "a decoded block re-encodes to its bytes");
  }
}
