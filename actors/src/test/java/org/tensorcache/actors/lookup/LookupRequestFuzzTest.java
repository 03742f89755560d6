package org.tensorcache.actors.lookup;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The server's side of the lookup port on arbitrary bytes: a stream of frames read as a node reads
 * requests ({@link LookupFrames#read} with the request limit), each body decoded by {@link
 * LookupWire#decodeRequest}. A frame and a request either decode or fail with a {@link
 * ProtocolException} (the stream's end with an {@link EOFException}), reading no more than the
 * stream holds into no buffer larger than it needs. A request encodes again to what decodes equal,
 * and to the same bytes where its strings were valid UTF-8.
 */
class LookupRequestFuzzTest {
  /** R, the request limit of a node with the default max-batch. */
  private static final int MAX_REQUEST = LookupWire.maxRequest(65_536);

  static {
    Allocations.warmUpFrames(MAX_REQUEST);
  }

  @FuzzTest(maxDuration = "3m")
  void decodeRequests(byte[] stream) throws IOException {
    LookupFrames frames = new LookupFrames();
    ByteArrayInputStream in = new ByteArrayInputStream(stream);
    while (true) {
      ByteBuffer body;
      long before = Allocations.now();
      try {
        body = frames.read(in, MAX_REQUEST);
      } catch (EOFException e) {
        return; // the client went away, between or inside frames
      } catch (ProtocolException e) {
        assertTrue(e.getMessage().startsWith("frame of "), e.getMessage());
        return; // the node answers PROTOCOL and closes the connection
      } finally {
        long allocated = Allocations.now() - before;
        assertTrue(
            allocated <= (64 << 10) + 2L * stream.length,
            allocated + " bytes allocated to read a frame from a stream of " + stream.length);
      }
      byte[] bytes = new byte[body.remaining()];
      body.duplicate().get(bytes);
      LookupWire.Request r;
      try {
        r = LookupWire.decodeRequest(body);
      } catch (ProtocolException e) {
        assertTrue(e.getMessage() != null && !e.getMessage().isEmpty());
        return;
      }
      checkReencoded(r, bytes);
    }
  }

  private static void checkReencoded(LookupWire.Request r, byte[] bytes) throws IOException {
    byte[] id = r.cacheId().getBytes(StandardCharsets.UTF_8);
    if (id.length > 0xffff) {
      return; // invalid UTF-8 replaced by longer U+FFFD: no frame can carry it back
    }
    LookupFrames frames = new LookupFrames();
    ByteBuffer frame;
    if (r.op() == LookupWire.GET) {
      frame = LookupWire.encodeGet(frames, r.version(), id, r.indices());
    } else if (r.op() == LookupWire.DESCRIBE) {
      frame = LookupWire.encodeDescribe(frames, id);
    } else if (r.op() == LookupWire.INPUTS) {
      frame = LookupInputs.encodeRequest(frames, id);
    } else if (r.op() == LookupWire.AUTH) {
      if (r.token().getBytes(StandardCharsets.UTF_8).length > 0xffff) {
        return;
      }
      frame =
          LookupWire.encodeAuth(frames, r.token()); // with an empty cache id, which nodes ignore
    } else {
      if (r.session().run().getBytes(StandardCharsets.UTF_8).length > 0xffff) {
        return;
      }
      frame = SessionWire.encode(frames, r.version(), r.op(), id, r.session());
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    frames.send(frame, out);
    LookupWire.Request again =
        LookupWire.decodeRequest(
            new LookupFrames().read(new ByteArrayInputStream(out.toByteArray()), MAX_REQUEST));
    assertEquals(r.op(), again.op());
    assertArrayEquals(r.indices(), again.indices());
    assertEquals(r.session(), again.session());
    assertEquals(r.token(), again.token());
    if (r.op() == LookupWire.AUTH && !r.cacheId().isEmpty()) {
      return; // an AUTH is sent with no cache id
    }
    assertEquals(r.cacheId(), again.cacheId());
    if (r.op() == LookupWire.DESCRIBE) {
      return; // always sent as version 1, and a node ignores bytes after the cache id
    }
    if (r.op() == LookupWire.AUTH && r.version() != LookupWire.VERSION_3) {
      return; // always sent as version 3
    }
    assertEquals(r.version(), again.version());
    if (validUtf8(r, bytes)) {
      byte[] reencoded = Arrays.copyOfRange(out.toByteArray(), 4, out.size());
      assertArrayEquals(bytes, reencoded, "a request re-encodes to its bytes");
    }
  }

  /** Whether the request's strings were valid UTF-8, so that decoding them lost nothing. */
  private static boolean validUtf8(LookupWire.Request r, byte[] bytes) {
    ByteBuffer b = ByteBuffer.wrap(bytes);
    try {
      int count = r.session() == null && r.op() != LookupWire.AUTH ? 1 : 2;
      for (int strings = count, at = 2; strings > 0; strings--) {
        int n = (b.get(at) & 0xff) | (b.get(at + 1) & 0xff) << 8;
        StandardCharsets.UTF_8
            .newDecoder()
            .decode(b.duplicate().position(at + 2).limit(at + 2 + n));
        at += 2 + n;
      }
      return true;
    } catch (CharacterCodingException e) {
      return false;
    }
  }
}
