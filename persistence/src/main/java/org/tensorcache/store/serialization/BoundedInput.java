package org.tensorcache.store.serialization;

import com.esotericsoftware.kryo.KryoException;
import com.esotericsoftware.kryo.unsafe.UnsafeInput;

/**
 * Kryo's input over the bytes of one message, which refuses a string or an array whose announced
 * length the bytes left cannot hold, before anything is allocated for it: every character and
 * element takes at least one byte, so a corrupt length (negative, or gigabytes from a few bytes) is
 * a {@link KryoException}, not an out-of-memory error or a negative array size. Arrays are checked
 * by {@link BoundedArraySerializer}, strings here.
 */
final class BoundedInput extends UnsafeInput {
  BoundedInput(byte[] bytes) {
    super(bytes);
  }

  @Override
  public String readString() {
    if (readVarIntFlag()) { // null, empty or UTF-8 after a character count; else ASCII to its end
      int at = position;
      checkLength(readVarIntFlag(true), "string");
      position = at;
    }
    return super.readString();
  }

  /**
   * Checks a length as Kryo writes it (the count + 1, 0 for null) against the bytes left, at one
   * byte at least per character or element of {@code what}.
   */
  void checkLength(int lengthPlusOne, String what) {
    if (lengthPlusOne < 0 || lengthPlusOne - 1 > limit - position) {
      throw new KryoException(
          String.format(
              "%s of %d elements announced, only %d bytes left",
              what, lengthPlusOne - 1, limit - position));
    }
  }
}
