package org.tensorcache.actors.lookup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.Map;
import org.tensorcache.actors.session.SessionStep;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldArrays;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.store.spec.CacheSpec;

/**
 * The client's side of the lookup port on arbitrary bytes: a reply frame read as the client reads
 * one ({@link LookupFrames#read}, up to the largest frame), its status read by {@link
 * LookupReplies#decodeStatus}, then its body as the reply to a DESCRIBE ({@link
 * LookupReplies#decodeSpec}), to a version-3 GET ({@link LookupReplies#decodeValues}), to OPEN or
 * RESUME ({@link SessionWire#decodeNextStep}), to NEXT ({@link SessionWire#decodeStep}) or to
 * INPUTS ({@link LookupInputs#decodeReply}).
 *
 * <p>The contract: BAD_REQUEST gives an {@link IllegalArgumentException} and FAILED a {@link
 * LookupFailedException}, and only they; anything else malformed is a {@link ProtocolException}
 * (after which the client closes the connection), the stream's end an {@link EOFException}. What
 * decodes encodes again to what decodes equal. Reading a frame allocates no more than the stream
 * holds, whatever length it announces.
 */
class LookupReplyFuzzTest {
  /** The caches whose values the fuzzed replies carry. */
  static final List<CacheSpec> SPECS =
      List.of(
          new CacheSpec("c", 1000, List.of(new FieldSpec("logp", DType.F32, new int[0])), 256),
          new CacheSpec(
              "c",
              1000,
              List.of(
                  new FieldSpec("emb", DType.BF16, new int[] {2}),
                  new FieldSpec("tokens", DType.I32, new int[0])),
              256),
          new CacheSpec(
              "c",
              1000,
              List.of(
                  new FieldSpec("half", DType.F16, new int[] {3}),
                  new FieldSpec("ids", DType.I64, new int[0])),
              256));

  /** Which reply the frame is read as. */
  static final int DESCRIBE = 0, VALUES = 1, NEXT_STEP = 2, STEP = 3, INPUTS = 4;

  /**
   * Byte 0 picks the reply read (its value modulo 5, the kinds above), byte 1 the cache of its
   * values, byte 2 the number of indices asked for (GET); the frame follows.
   */
  static {
    Allocations.warmUpFrames(LookupFrames.MAX_FRAME);
  }

  @FuzzTest(maxDuration = "3m")
  void decodeReply(byte[] input) throws IOException {
    if (input.length < 3) {
      return;
    }
    int kind = (input[0] & 0xff) % 5;
    CacheSpec spec = SPECS.get((input[1] & 0xff) % SPECS.size());
    int count = input[2] & 0xff;
    LookupFrames frames = new LookupFrames();
    ByteBuffer frame;
    long before = Allocations.now();
    try {
      frame = frames.read(new ByteArrayInputStream(input, 3, input.length - 3));
    } catch (EOFException e) {
      return;
    } catch (ProtocolException e) {
      assertTrue(e.getMessage().startsWith("frame of "), e.getMessage());
      return;
    } finally {
      long allocated = Allocations.now() - before;
      assertTrue(
          allocated <= (64 << 10) + 2L * input.length,
          allocated + " bytes allocated to read a frame from a stream of " + input.length);
    }
    byte status = frame.get(0);
    try {
      ByteBuffer body = LookupReplies.decodeStatus(frame, "fuzz");
      assertEquals(LookupWire.OK, status, "a reply of status " + status + " read as OK");
      switch (kind) {
        case DESCRIBE -> describe(body);
        case VALUES -> values(body, spec, count);
        case NEXT_STEP -> nextStep(body);
        case STEP -> step(body, spec);
        default -> inputs(body);
      }
    } catch (IllegalArgumentException e) {
      assertEquals(LookupWire.BAD_REQUEST, status, "not a BAD_REQUEST reply: " + e);
    } catch (LookupFailedException e) {
      assertEquals(LookupWire.FAILED, status, "not a FAILED reply: " + e);
    } catch (ProtocolException e) {
      assertTrue(e.getMessage() != null && !e.getMessage().isEmpty());
    }
  }

  private static void describe(ByteBuffer body) throws IOException {
    CacheSpec spec = LookupReplies.decodeSpec(body);
    LookupFrames frames = new LookupFrames();
    assertEquals(
        spec, LookupReplies.decodeSpec(reread(frames, LookupReplies.encodeSpec(frames, spec))));
  }

  private static void values(ByteBuffer body, CacheSpec spec, int count) throws IOException {
    Object[] values = LookupChecks.newValues(spec, count);
    LookupReplies.decodeValues(body, spec, count, values);
    LookupFrames frames = new LookupFrames();
    ByteBuffer again =
        reread(frames, LookupReplies.encodeValues(frames, LookupWire.VERSION_3, spec, values));
    Object[] decoded = LookupChecks.newValues(spec, count);
    LookupReplies.decodeValues(again, spec, count, decoded);
    assertValuesEqual(values, decoded);
  }

  private static void nextStep(ByteBuffer body) throws IOException {
    long next = SessionWire.decodeNextStep(body);
    LookupFrames frames = new LookupFrames();
    assertEquals(
        next, SessionWire.decodeNextStep(reread(frames, SessionWire.encodeNextStep(frames, next))));
  }

  private static void step(ByteBuffer body, CacheSpec spec) throws IOException {
    SessionWire.StepReply reply = SessionWire.decodeStep(body, spec);
    LookupFrames frames = new LookupFrames();
    SessionStep step = reply.step();
    SessionWire.StepReply again =
        SessionWire.decodeStep(
            reread(
                frames,
                SessionWire.encodeStep(frames, LookupWire.VERSION_3, spec, step, reply.values())),
            spec);
    assertEquals(step, again.step());
    assertValuesEqual(reply.values(), again.values());
  }

  private static void inputs(ByteBuffer body) throws IOException {
    Map<String, String> inputs = LookupInputs.decodeReply(body);
    byte[] json;
    try {
      json = LookupInputs.json("c", inputs);
    } catch (LookupFailedException e) {
      return; // malformed UTF-8 read as U+FFFD (3 bytes each) or a lone surrogate: no reply's JSON
    }
    LookupFrames frames = new LookupFrames();
    assertEquals(
        inputs, LookupInputs.decodeReply(reread(frames, LookupInputs.encodeReply(frames, json))));
  }

  /** The body of the frame built in {@code frame}, sent and read back, after its OK status. */
  private static ByteBuffer reread(LookupFrames frames, ByteBuffer frame) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    frames.send(frame, out);
    return LookupReplies.decodeStatus(
        new LookupFrames().read(new ByteArrayInputStream(out.toByteArray())), "again");
  }

  private static void assertValuesEqual(Object[] expected, Object[] actual) {
    assertEquals(expected.length, actual.length);
    for (int f = 0; f < expected.length; f++) {
      assertTrue(FieldArrays.equal(expected[f], actual[f]), "field " + f);
    }
  }
}
