package org.tensorcache.actors.lookup;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The INPUTS op's codec: the request only in version 4 and with nothing after the cache id; the
 * reply's JSON compact and sorted on the way out, read as JSON on the way in, and anything but an
 * object of strings refused.
 */
class LookupInputsTest {
  private static ByteBuffer frame(byte[] body) throws Exception {
    ByteBuffer b = ByteBuffer.allocate(4 + body.length).order(ByteOrder.LITTLE_ENDIAN);
    b.putInt(body.length).put(body);
    return new LookupFrames().read(new ByteArrayInputStream(b.array()));
  }

  /** The body of an OK reply whose JSON is {@code json}, after its status. */
  private static ByteBuffer okReply(String json) throws Exception {
    byte[] text = json.getBytes(StandardCharsets.UTF_8);
    ByteBuffer body = ByteBuffer.allocate(3 + text.length).order(ByteOrder.LITTLE_ENDIAN);
    body.put(LookupWire.OK).putShort((short) text.length).put(text);
    return LookupReplies.decodeStatus(frame(body.array()), "peer");
  }

  private static String request(byte version, byte op, String cacheId, int extra) throws Exception {
    byte[] id = cacheId.getBytes(StandardCharsets.UTF_8);
    ByteBuffer body = ByteBuffer.allocate(4 + id.length + extra).order(ByteOrder.LITTLE_ENDIAN);
    body.put(version).put(op).putShort((short) id.length).put(id);
    try {
      return LookupWire.decodeRequest(frame(body.array())).cacheId();
    } catch (ProtocolException e) {
      return "refused: " + e.getMessage();
    }
  }

  @Test
  void theRequestIsAnOpOfVersion4WithNothingAfterTheCacheId() throws Exception {
    assertEquals("logp-3f09c2a7d1e84b6c", request((byte) 4, (byte) 7, "logp-3f09c2a7d1e84b6c", 0));
    assertEquals(
        "refused: op 7 in protocol version 3, expected 1 or 2 or a session op 3..5 or AUTH 6",
        request((byte) 3, (byte) 7, "c", 0));
    assertEquals(
        "refused: op 7 in protocol version 1, expected 1 or 2",
        request((byte) 1, (byte) 7, "c", 0));
    assertEquals("refused: 2 bytes after the request of op 7", request((byte) 4, (byte) 7, "c", 2));
    assertEquals(
        "refused: op 8 in protocol version 4, expected 1 or 2 or a session op 3..5 or AUTH 6 or"
            + " INPUTS 7",
        request((byte) 4, (byte) 8, "c", 0));
    // every op of version 3 is one of version 4 too
    assertEquals("c", request((byte) 4, LookupWire.DESCRIBE, "c", 0));
  }

  @Test
  void theJsonIsCompactSortedAndEscaped() throws Exception {
    Map<String, String> inputs = new LinkedHashMap<>();
    inputs.put("z", "last");
    inputs.put("dataset", "Größe \"q\"\n\\😀");
    inputs.put("a", "");
    byte[] json = LookupInputs.json("c", inputs);
    assertEquals(
        "{\"a\":\"\",\"dataset\":\"Größe \\\"q\\\"\\n\\\\😀\",\"z\":\"last\"}",
        new String(json, StandardCharsets.UTF_8));
    LookupFrames frames = new LookupFrames();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    frames.send(LookupInputs.encodeReply(frames, json), out);
    ByteBuffer body = new LookupFrames().read(new ByteArrayInputStream(out.toByteArray()));
    Map<String, String> back = LookupInputs.decodeReply(LookupReplies.decodeStatus(body, "peer"));
    assertEquals(inputs, back);
    assertEquals(List.of("a", "dataset", "z"), List.copyOf(back.keySet()));
  }

  @Test
  void anyValidJsonObjectOfStringsIsRead() throws Exception {
    assertEquals(
        Map.of("b", "é\t", "a", "x"),
        LookupInputs.decodeReply(okReply(" {\n \"b\" : \"\\u00e9\\t\" , \"a\":\"x\" }\n")));
    assertEquals(Map.of(), LookupInputs.decodeReply(okReply("{}")));
  }

  @Test
  void anythingButAnObjectOfStringsIsAProtocolError() throws Exception {
    String[][] bad = {
      {"[]", "reply to INPUTS of no JSON object: []"},
      {"\"a\"", "reply to INPUTS of no JSON object: \"a\""},
      {"", "reply to INPUTS of no JSON object: "},
      {"{\"n\":1000}", "recorded input 'n' is 1000 in the reply to INPUTS, expected a string"},
      {"{\"a\":null}", "recorded input 'a' is null in the reply to INPUTS, expected a string"},
      {"{\"a\":{\"b\":\"c\"}}", "recorded input 'a' is {\"b\":\"c\"} in the reply to INPUTS"},
      {"{\"a\":\"1\",\"a\":\"2\"}", "reply to INPUTS of no valid JSON: Duplicate field 'a'"},
      {"{\"a\":", "reply to INPUTS of no valid JSON: "},
      {"{} {}", "reply to INPUTS of no valid JSON: "},
      {"{'a':'b'}", "reply to INPUTS of no valid JSON: "},
    };
    for (String[] c : bad) {
      ProtocolException e =
          assertThrows(
              ProtocolException.class, () -> LookupInputs.decodeReply(okReply(c[0])), c[0]);
      assertTrue(e.getMessage().startsWith(c[1]), c[0] + " gave " + e.getMessage());
    }
    ByteBuffer trailing = okReply("{}");
    ByteBuffer longer = ByteBuffer.allocate(trailing.remaining() + 1);
    longer.put(trailing).put((byte) 0).flip();
    ProtocolException e =
        assertThrows(
            ProtocolException.class,
            () -> LookupInputs.decodeReply(longer.order(ByteOrder.LITTLE_ENDIAN)));
    assertEquals("1 bytes after the reply to INPUTS", e.getMessage());
  }

  @Test
  void inputsLongerThanAReplyCarriesFailNamingTheCache() {
    String big = "x".repeat(LookupInputs.MAX_JSON_BYTES);
    LookupFailedException e =
        assertThrows(
            LookupFailedException.class, () -> LookupInputs.json("c", Map.of("model_dir", big)));
    assertEquals(
        "recorded inputs of cache 'c' are 65551 bytes of JSON, more than the 65535 a reply"
            + " carries",
        e.getMessage());
    // the longest that fits: {"k":"…"} is 8 bytes around the value
    byte[] fits = LookupInputs.json("c", Map.of("k", "y".repeat(LookupInputs.MAX_JSON_BYTES - 8)));
    assertEquals(LookupInputs.MAX_JSON_BYTES, fits.length);
    assertArrayEquals("{\"k\":\"yy".getBytes(StandardCharsets.UTF_8), Arrays.copyOf(fits, 8));
  }
}
