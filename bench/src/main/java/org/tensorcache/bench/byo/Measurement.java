package org.tensorcache.bench.byo;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.LinkedHashMap;
import java.util.Map;
import org.tensorcache.bench.report.Stats;

/**
 * One measurement's figures, from the result a child process wrote: examples per second of the
 * timed part, and the process's resident memory (its peak over the whole process, before the timed
 * part, and after the model was loaded where known), or why it is missing.
 *
 * @param ok whether it was measured
 * @param why why not, else null
 * @param examplesPerS rows per second of the timed part
 * @param seconds the timed part's seconds
 * @param peakRss the process's peak resident bytes ({@code VmHWM}), load and warm-up included
 * @param rssBeforeTimed resident bytes before the timed part (model loaded, warmed up)
 * @param rssAfterLoad resident bytes right after the model was loaded (-1 where not known)
 * @param detail the figures that belong to one side only
 */
record Measurement(
    boolean ok,
    String why,
    double examplesPerS,
    double seconds,
    long peakRss,
    long rssBeforeTimed,
    long rssAfterLoad,
    Map<String, Object> detail) {

  /** A measurement that was not taken, and why. */
  static Measurement missing(String why) {
    return new Measurement(false, why, Double.NaN, Double.NaN, -1, -1, -1, Map.of());
  }

  /** From {@code scripts/bench_trl.py}'s result. */
  static Measurement ofTrl(JsonNode r) {
    if (!r.path("ok").asBoolean(false)) {
      return missing(r.path("error").asText("failed"));
    }
    JsonNode m = r.path("memory");
    Map<String, Object> d = new LinkedHashMap<>();
    d.put("batch_size", r.path("batch_size").asInt());
    d.put("computed_rows", r.path("computed_rows").asInt());
    d.put("dropped_rows", r.path("dropped_rows").asInt());
    d.put("warmup_rows", r.path("warmup_rows").asInt());
    d.put("tokens", r.path("tokens").asLong());
    d.put("padded_tokens", r.path("padded_tokens").asLong());
    d.put("max_padded_length", r.path("max_padded_length").asInt());
    d.put("forward_seconds", Stats.round(r.path("phases").path("forward_seconds").asDouble(), 3));
    d.put("load_seconds", Stats.round(r.path("load_seconds").asDouble(), 2));
    d.put("torch_threads", r.path("torch_threads").asInt());
    d.put("interop_threads", r.path("interop_threads").asInt());
    JsonNode v = r.path("versions");
    d.put(
        "versions",
        String.format(
            "torch %s, transformers %s, trl %s",
            v.path("torch").asText(), v.path("transformers").asText(), v.path("trl").asText()));
    d.put(
        "precompute_peak_rss_mib", ProcMemory.mib(m.path("precompute_peak_rss_bytes").asLong(-1)));
    return new Measurement(
        true,
        null,
        r.path("examples_per_s").asDouble(),
        r.path("seconds").asDouble(),
        m.path("peak_rss_bytes").asLong(-1),
        m.path("rss_before_bytes").asLong(-1),
        -1,
        d);
  }

  /** From {@link ByoChild}'s result. */
  static Measurement ofJvm(JsonNode r) {
    if (!r.path("ok").asBoolean(false)) {
      return missing(r.path("error").asText("failed"));
    }
    Map<String, Object> d = new LinkedHashMap<>();
    d.put("warmup_rows", r.path("warmup_rows").asInt());
    d.put("load_seconds", Stats.round(r.path("load_seconds").asDouble(), 2));
    d.put("libtorch_threads", r.path("libtorch_threads").asInt());
    d.put("libtorch_interop_threads", r.path("libtorch_interop_threads").asInt());
    d.put("max_heap_mib", r.path("max_heap_mib").asLong());
    r.path("timed")
        .fields()
        .forEachRemaining(
            e ->
                d.put(
                    e.getKey(),
                    e.getValue().isNumber()
                        ? (Object) Stats.round(e.getValue().asDouble(), 3)
                        : e.getValue().asText()));
    return new Measurement(
        true,
        null,
        r.path("examples_per_s").asDouble(),
        r.path("seconds").asDouble(),
        r.path("peak_rss_bytes").asLong(-1),
        r.path("rss_before_timed_bytes").asLong(-1),
        r.path("rss_after_load_bytes").asLong(-1),
        d);
  }

  /**
   * This measurement with the machine's load average when it started, to tell a slow measurement
   * from a busy machine.
   */
  Measurement withLoad(String loadAverage) {
    Map<String, Object> d = new LinkedHashMap<>(detail);
    d.put("load_average_at_start", loadAverage);
    return new Measurement(
        ok, why, examplesPerS, seconds, peakRss, rssBeforeTimed, rssAfterLoad, d);
  }

  /** The figures as the results file holds them. */
  Map<String, Object> toMap() {
    Map<String, Object> m = new LinkedHashMap<>();
    if (!ok) {
      m.put("left_out", why);
      m.putAll(detail);
      return m;
    }
    m.put("examples_per_s", Stats.round(examplesPerS, 3));
    m.put("seconds", Stats.round(seconds, 3));
    m.put("peak_rss_mib", ProcMemory.mib(peakRss));
    m.put("rss_before_timed_mib", ProcMemory.mib(rssBeforeTimed));
    if (rssAfterLoad >= 0) {
      m.put("rss_after_load_mib", ProcMemory.mib(rssAfterLoad));
    }
    m.putAll(detail);
    return m;
  }
}
