package org.tensorcache.store.export;

import static org.tensorcache.store.segment.SafetensorsChecks.reject;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import org.tensorcache.store.segment.SegmentRejectedException.Reason;
import org.tensorcache.store.spec.Fingerprint;

/**
 * The {@value CacheExport#INPUTS} metadata of an export: the inputs the cache was filled from as
 * one compact JSON object of strings, keys sorted, encoded and decoded here.
 */
final class ExportInputs {
  private static final ObjectMapper JSON = new ObjectMapper();

  private ExportInputs() {}

  /** The inputs as compact JSON, keys sorted. */
  static String encode(Map<String, String> inputs) {
    try {
      return JSON.writeValueAsString(new TreeMap<>(inputs));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot encode the inputs " + inputs, e);
    }
  }

  /**
   * The inputs of {@code json}, empty when it is null (an export written before inputs were
   * recorded); anything but a JSON object of strings is rejected.
   */
  static Map<String, String> parse(Path file, String json) {
    Map<String, String> inputs = new TreeMap<>();
    if (json == null) {
      return inputs;
    }
    JsonNode node;
    try {
      node = JSON.readTree(json);
    } catch (JsonProcessingException e) {
      throw reject(
          file, Reason.BAD_HEADER, "metadata '%s' is not JSON: %s", CacheExport.INPUTS, json);
    }
    if (node == null || !node.isObject()) {
      throw reject(
          file,
          Reason.BAD_HEADER,
          "metadata '%s' %s, expected a JSON object",
          CacheExport.INPUTS,
          json);
    }
    for (Map.Entry<String, JsonNode> e : node.properties()) {
      if (!e.getValue().isTextual()) {
        throw reject(
            file,
            Reason.BAD_HEADER,
            "metadata '%s' key '%s' is %s, expected a string",
            CacheExport.INPUTS,
            e.getKey(),
            e.getValue());
      }
      inputs.put(e.getKey(), e.getValue().textValue());
    }
    return inputs;
  }

  /** Inputs that name a cache must name the one {@code expected} identifies. */
  static void check(Path file, Map<String, String> inputs, Fingerprint expected) {
    expectIfPresent(file, "fingerprint", inputs.get("fingerprint"), expected.hex());
    expectIfPresent(file, "cache_id", inputs.get("cache_id"), expected.cacheId());
  }

  private static void expectIfPresent(Path file, String key, String found, String expected) {
    if (found != null && !found.equals(expected)) {
      throw reject(
          file,
          Reason.FOREIGN_FINGERPRINT,
          "%s %s '%s', expected '%s'",
          CacheExport.INPUTS,
          key,
          found,
          expected);
    }
  }
}
