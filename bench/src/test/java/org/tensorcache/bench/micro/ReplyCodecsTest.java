package org.tensorcache.bench.micro;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.tensorcache.actors.lookup.LookupActor;

/**
 * The benchmark's reply codecs read back what they wrote, for a reply shaped as a node sends it:
 * its fields an {@code Object[]} of {@code float[]}.
 */
class ReplyCodecsTest {
  private static final LookupActor.Values REPLY = Fixtures.reply(32);

  @Test
  void cborReadsBackFloatFields() throws Exception {
    assertSame(REPLY, ReplyCodecs.cborDecode(ReplyCodecs.cborEncode(REPLY)));
  }

  @Test
  void rawReadsBackFloatFields() {
    assertSame(REPLY, ReplyCodecs.rawDecode(ReplyCodecs.rawEncode(REPLY)));
  }

  @Test
  void kryoReadsBackFloatFields() {
    ReplyCodecs.ProductKryo kryo = new ReplyCodecs.ProductKryo();
    assertSame(REPLY, kryo.read(kryo.write(REPLY), LookupActor.Values.class));
  }

  @Test
  void aFieldOfAnotherDtypeIsRejectedByName() {
    LookupActor.Values halves =
        new LookupActor.Values(new long[] {7}, new Object[] {new float[] {1f}, new short[] {2}});
    var e = assertThrows(IllegalArgumentException.class, () -> ReplyCodecs.cborEncode(halves));
    assertTrue(e.getMessage().contains("field 1 of the reply is short[]"), e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> ReplyCodecs.rawEncode(halves));
  }

  private static void assertSame(LookupActor.Values sent, LookupActor.Values got) {
    assertArrayEquals(sent.indices(), got.indices());
    assertEquals(sent.values().length, got.values().length);
    for (int f = 0; f < sent.values().length; f++) {
      assertEquals(float[].class, got.values()[f].getClass(), "field " + f);
      assertArrayEquals((float[]) sent.values()[f], (float[]) got.values()[f], "field " + f);
    }
  }
}
