package org.tensorcache.actors.lookup;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.json.JsonWriteFeature;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import java.net.ProtocolException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;

/**
 * The INPUTS op of the lookup port (protocol version 4), both directions: a cache's recorded
 * inputs, the flat string-to-string map a trainer checks its data set, model and tokenizer against,
 * as one JSON object in a {@code str}, so at most 65,535 bytes of UTF-8.
 *
 * <pre>
 * request := version:u8 op:u8 cache:str        version 4, op INPUTS, nothing after the cache id
 * OK reply := status:u8 inputs:str             a JSON object, every value a string
 * </pre>
 */
public final class LookupInputs {
  /** The most bytes of JSON a reply carries: the limit of a {@code str}. */
  public static final int MAX_JSON_BYTES = 0xffff;

  /** Strict on the way in; on the way out, characters beyond U+FFFF as UTF-8, not escaped. */
  private static final ObjectMapper JSON =
      JsonMapper.builder()
          .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
          .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
          .enable(JsonWriteFeature.COMBINE_UNICODE_SURROGATES_IN_UTF8)
          .build();

  private LookupInputs() {}

  /** Builds an INPUTS request (protocol version 4) for the cache whose id is {@code cacheId}. */
  public static ByteBuffer encodeRequest(LookupFrames frames, byte[] cacheId) {
    ByteBuffer b = frames.start(2 + 2 + cacheId.length);
    b.put(LookupWire.VERSION_4).put(LookupWire.INPUTS);
    return LookupWire.putStr(b, cacheId);
  }

  /**
   * The recorded inputs as the reply carries them: compact JSON, keys in sorted order. Inputs whose
   * JSON is longer than a reply can carry are a {@link LookupFailedException} (a FAILED reply)
   * naming the cache: the request was fine, the node cannot serve it.
   */
  public static byte[] json(String cacheId, Map<String, String> inputs) {
    byte[] json;
    try {
      json = JSON.writeValueAsBytes(new TreeMap<>(inputs));
    } catch (JsonProcessingException e) {
      throw new LookupFailedException("recorded inputs of cache '" + cacheId + "': " + e, e);
    }
    if (json.length > MAX_JSON_BYTES) {
      throw new LookupFailedException(
          String.format(
              "recorded inputs of cache '%s' are %d bytes of JSON, more than the %d a reply"
                  + " carries",
              cacheId, json.length, MAX_JSON_BYTES),
          null);
    }
    return json;
  }

  /** Builds the OK reply to an INPUTS: the JSON of {@link #json}. */
  public static ByteBuffer encodeReply(LookupFrames frames, byte[] json) {
    ByteBuffer b = frames.start(1 + 2 + json.length).put(LookupWire.OK);
    return LookupWire.putStr(b, json);
  }

  /**
   * Reads the OK reply to an INPUTS (after its status): a JSON object whose values are all strings,
   * in sorted key order. Anything else is a {@link ProtocolException}: the peer is not one to trust
   * with the connection.
   */
  public static Map<String, String> decodeReply(ByteBuffer reply) throws ProtocolException {
    String text;
    try {
      text = LookupWire.getStr(reply);
    } catch (BufferUnderflowException e) {
      throw new ProtocolException("truncated reply to INPUTS");
    }
    if (reply.hasRemaining()) {
      throw new ProtocolException(reply.remaining() + " bytes after the reply to INPUTS");
    }
    JsonNode node;
    try {
      node = JSON.readTree(text);
    } catch (JsonProcessingException e) {
      throw new ProtocolException(
          "reply to INPUTS of no valid JSON: " + e.getOriginalMessage() + " in " + clip(text));
    }
    if (node == null || !node.isObject()) {
      throw new ProtocolException("reply to INPUTS of no JSON object: " + clip(text));
    }
    Map<String, String> inputs = new TreeMap<>();
    for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
      Map.Entry<String, JsonNode> e = it.next();
      if (!e.getValue().isTextual()) {
        throw new ProtocolException(
            String.format(
                "recorded input '%s' is %s in the reply to INPUTS, expected a string",
                e.getKey(), clip(e.getValue().toString())));
      }
      inputs.put(e.getKey(), e.getValue().textValue());
    }
    return inputs;
  }

  /** The start of a text for an error message. */
  private static String clip(String text) {
    return text.length() > 200 ? text.substring(0, 200) + "..." : text;
  }
}
