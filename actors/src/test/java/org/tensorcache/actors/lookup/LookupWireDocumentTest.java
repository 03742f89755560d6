package org.tensorcache.actors.lookup;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.tensorcache.fields.DType;
import org.tensorcache.fields.FieldSpec;
import org.tensorcache.fields.HalfFloats;
import org.tensorcache.store.spec.CacheSpec;

/** The Java codec against the worked examples of {@code docs/wire-protocol.md}. */
class LookupWireDocumentTest {
  private static final Pattern HEX = Pattern.compile("(?m)^[0-9a-f]{2}(?: [0-9a-f]{2})*");

  /** The first code block after {@code title}, as bytes. */
  private static byte[] example(String title) throws Exception {
    return example(title, 0);
  }

  /** The code block number {@code skip} (from 0) after {@code title}, as bytes. */
  private static byte[] example(String title, int skip) throws Exception {
    String doc = Files.readString(Path.of("..", "docs", "wire-protocol.md"));
    int from = doc.indexOf(title);
    for (int i = 0; i <= skip; i++) {
      from = doc.indexOf("```", doc.indexOf("```", from) + 3) + 3;
    }
    int open = doc.lastIndexOf("```", from - 4) + 3;
    String block = doc.substring(open, from - 3);
    StringBuilder hex = new StringBuilder();
    Matcher m = HEX.matcher(block);
    while (m.find()) {
      hex.append(m.group().replace(" ", ""));
    }
    return HexFormat.of().parseHex(hex);
  }

  private static byte[] bytes(LookupFrames frames, ByteBuffer frame) throws Exception {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    frames.send(frame, out);
    return out.toByteArray();
  }

  @Test
  void getRequestAndValuesReplyAreTheDocuments() throws Exception {
    LookupFrames frames = new LookupFrames();
    byte[] get = example("### GET of indices [7, 42]");
    assertArrayEquals(
        get,
        bytes(
            frames,
            LookupWire.encodeGet(
                frames,
                LookupWire.VERSION,
                "c".getBytes(StandardCharsets.UTF_8),
                new long[] {7, 42})));
    LookupWire.Request decoded =
        LookupWire.decodeRequest(new LookupFrames().read(new ByteArrayInputStream(get)));
    assertEquals("c", decoded.cacheId());
    assertArrayEquals(new long[] {7, 42}, decoded.indices());
    assertArrayEquals(
        example("### OK reply: one field of width 1"),
        bytes(
            frames,
            LookupReplies.encodeValues(
                frames, LookupWire.VERSION, LOGP, new Object[] {new float[] {1.5f, -2.0f}})));
  }

  /** The cache of the examples: one F32 scalar. */
  private static final CacheSpec LOGP =
      new CacheSpec("c", 1000, List.of(new FieldSpec("logp", DType.F32, new int[0])), 256);

  @Test
  void sessionOpenIsTheDocuments() throws Exception {
    LookupFrames frames = new LookupFrames();
    ByteBuffer open =
        SessionWire.encode(
            frames,
            LookupWire.VERSION_2,
            SessionWire.OPEN,
            "c".getBytes(StandardCharsets.UTF_8),
            new SessionWire.Args("r", 1, 2, 5, 10, -1));
    assertArrayEquals(example("Worked example: OPEN of run"), bytes(frames, open));
  }

  @Test
  void describeRoundTripIsTheDocuments() throws Exception {
    CacheSpec spec = LOGP;
    LookupFrames frames = new LookupFrames();
    byte[] c = "c".getBytes(StandardCharsets.UTF_8);
    String title = "### DESCRIBE round trip";
    byte[] request = bytes(frames, LookupWire.encodeDescribe(frames, c));
    assertArrayEquals(example(title), request);
    byte[] reply = bytes(frames, LookupReplies.encodeSpec(frames, spec));
    assertArrayEquals(example(title, 1), reply);
    ByteBuffer body = new LookupFrames().read(new ByteArrayInputStream(reply));
    assertEquals(spec, LookupReplies.decodeSpec(LookupReplies.decodeStatus(body, "doc")));
  }

  /** The cache of the version-3 examples: a BF16 vector of 2 and an I32 scalar. */
  private static final CacheSpec TYPED =
      new CacheSpec(
          "c",
          1000,
          List.of(
              new FieldSpec("emb", DType.BF16, new int[] {2}),
              new FieldSpec("tokens", DType.I32, new int[0])),
          256);

  @Test
  void version3IsTheDocuments() throws Exception {
    LookupFrames frames = new LookupFrames();
    byte[] c = "c".getBytes(StandardCharsets.UTF_8);
    byte[] get = example("#### Version 3 GET of indices [7, 42]");
    assertArrayEquals(
        get,
        bytes(frames, LookupWire.encodeGet(frames, LookupWire.VERSION_3, c, new long[] {7, 42})));
    assertEquals(
        LookupWire.VERSION_3,
        LookupWire.decodeRequest(new LookupFrames().read(new ByteArrayInputStream(get))).version());
    assertArrayEquals(
        example("#### DESCRIBE reply of a cache with fields `emb`"),
        bytes(frames, LookupReplies.encodeSpec(frames, TYPED)));

    short[] emb = {
      HalfFloats.floatToBf16(1.0f),
      HalfFloats.floatToBf16(-2.0f),
      HalfFloats.floatToBf16(0.5f),
      HalfFloats.floatToBf16(3.0f)
    };
    Object[] values = {emb, new int[] {7, 300_000}};
    byte[] reply = example("#### Version 3 OK reply");
    assertArrayEquals(
        reply,
        bytes(frames, LookupReplies.encodeValues(frames, LookupWire.VERSION_3, TYPED, values)));
    Object[] decoded = LookupChecks.newValues(TYPED, 2);
    ByteBuffer body = new LookupFrames().read(new ByteArrayInputStream(reply));
    LookupReplies.decodeValues(LookupReplies.decodeStatus(body, "doc"), TYPED, 2, decoded);
    assertArrayEquals(emb, (short[]) decoded[0]);
    assertArrayEquals(new int[] {7, 300_000}, (int[]) decoded[1]);

    IllegalArgumentException refused =
        assertThrows(
            IllegalArgumentException.class,
            () -> LookupWire.checkVersionCarries(LookupWire.VERSION_2, "c", TYPED));
    assertArrayEquals(
        example("#### BAD_REQUEST: a version-2 GET"),
        bytes(
            frames,
            LookupReplies.encodeError(frames, LookupWire.BAD_REQUEST, refused.getMessage())));
  }

  @Test
  void aDtypeCodeThatIsNotTheFieldsIsAProtocolError() throws Exception {
    LookupFrames frames = new LookupFrames();
    Object[] values = {new short[4], new int[2]};
    ByteBuffer reply = LookupReplies.encodeValues(frames, LookupWire.VERSION_3, TYPED, values);
    byte[] bytes = bytes(frames, reply);
    bytes[4 + 1 + 2] = 2; // F16 where the field is BF16
    ByteBuffer body = new LookupFrames().read(new ByteArrayInputStream(bytes));
    ProtocolException e =
        assertThrows(
            ProtocolException.class,
            () ->
                LookupReplies.decodeValues(
                    LookupReplies.decodeStatus(body, "doc"),
                    TYPED,
                    2,
                    LookupChecks.newValues(TYPED, 2)));
    assertEquals("dtype code 2 for field 'emb' in the reply, expected 3 (BF16)", e.getMessage());
  }

  @Test
  void inputsAreTheDocuments() throws Exception {
    LookupFrames frames = new LookupFrames();
    byte[] request = example("#### INPUTS request of cache `c`");
    assertArrayEquals(
        request,
        bytes(frames, LookupInputs.encodeRequest(frames, "c".getBytes(StandardCharsets.UTF_8))));
    LookupWire.Request decoded =
        LookupWire.decodeRequest(new LookupFrames().read(new ByteArrayInputStream(request)));
    assertEquals(LookupWire.VERSION_4, decoded.version());
    assertEquals(LookupWire.INPUTS, decoded.op());
    assertEquals("c", decoded.cacheId());

    Map<String, String> two = Map.of("n", "1000", "dataset", "prefs.jsonl");
    byte[] reply = example("#### OK reply to INPUTS: two recorded inputs");
    assertArrayEquals(
        reply, bytes(frames, LookupInputs.encodeReply(frames, LookupInputs.json("c", two))));
    ByteBuffer body = new LookupFrames().read(new ByteArrayInputStream(reply));
    assertEquals(two, LookupInputs.decodeReply(LookupReplies.decodeStatus(body, "doc")));

    byte[] none = example("#### OK reply to INPUTS: no recorded inputs");
    assertArrayEquals(
        none, bytes(frames, LookupInputs.encodeReply(frames, LookupInputs.json("c", Map.of()))));
    ByteBuffer empty = new LookupFrames().read(new ByteArrayInputStream(none));
    assertEquals(Map.of(), LookupInputs.decodeReply(LookupReplies.decodeStatus(empty, "doc")));

    // what a node of versions 1 to 3 answers, and what a current node answers a version 5
    String old = "protocol version 4, expected 1, 2 or 3";
    assertArrayEquals(
        example("#### PROTOCOL: INPUTS to a node of versions 1 to 3"),
        bytes(frames, LookupReplies.encodeError(frames, LookupWire.PROTOCOL, old)));
    request[4] = 5;
    ProtocolException newer =
        assertThrows(
            ProtocolException.class,
            () ->
                LookupWire.decodeRequest(
                    new LookupFrames().read(new ByteArrayInputStream(request))));
    assertEquals("protocol version 5, expected 1, 2, 3 or 4", newer.getMessage());
  }

  @Test
  void authIsTheDocuments() throws Exception {
    LookupFrames frames = new LookupFrames();
    byte[] auth = example("#### AUTH with the token `s3cret`");
    assertArrayEquals(auth, bytes(frames, LookupWire.encodeAuth(frames, "s3cret")));
    LookupWire.Request decoded =
        LookupWire.decodeRequest(new LookupFrames().read(new ByteArrayInputStream(auth)));
    assertEquals(LookupWire.AUTH, decoded.op());
    assertEquals("s3cret", decoded.token());
    assertEquals("", decoded.cacheId());
    assertArrayEquals(
        example("#### AUTH with the token `s3cret`", 1),
        bytes(frames, LookupReplies.encodeOk(frames)));
    assertArrayEquals(
        example("#### PROTOCOL: a wrong token"),
        bytes(
            frames,
            LookupReplies.encodeError(frames, LookupWire.PROTOCOL, "unauthorized: wrong token")));
    // AUTH is an op of version 3 only
    auth[4] = LookupWire.VERSION_2;
    ProtocolException e =
        assertThrows(
            ProtocolException.class,
            () ->
                LookupWire.decodeRequest(new LookupFrames().read(new ByteArrayInputStream(auth))));
    assertEquals(
        "op 6 in protocol version 2, expected 1 or 2 or a session op 3..5", e.getMessage());
  }
}
