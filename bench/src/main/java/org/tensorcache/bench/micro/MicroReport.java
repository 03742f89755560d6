package org.tensorcache.bench.micro;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.results.RunResult;
import org.tensorcache.bench.report.Charts;

/** Turns JMH results into rows (each figure beside its reference), tables and charts. */
final class MicroReport {
  /** Score and error in ns, by {@code Class.method param}. */
  private final Map<String, double[]> scores = new HashMap<>();

  /** Segment bytes by layout, from {@link #segments}. */
  private final Map<String, Integer> segmentSizes = new HashMap<>();

  MicroReport(Collection<RunResult> runs) {
    for (RunResult run : runs) {
      BenchmarkParams params = run.getParams();
      String name = params.getBenchmark();
      String key = name.substring(name.lastIndexOf('.', name.lastIndexOf('.') - 1) + 1);
      for (String p : params.getParamsKeys()) {
        key += " " + params.getParam(p);
      }
      var primary = run.getPrimaryResult();
      scores.put(key, new double[] {primary.getScore(), primary.getScoreError()});
    }
  }

  List<Map<String, Object>> merge(List<String> layouts) {
    System.out.println("-- block merge (element-wise MAX, both blocks complete), per merge --");
    System.out.println(
        "layout            floats     merge ns    inPlace ns   maxLoop ns  ip/loop inPlace GB/s"
            + "    Mfloats/s");
    List<Map<String, Object>> rows = new ArrayList<>();
    for (String layout : layouts) {
      var spec = Fixtures.spec(layout);
      long floats = (long) spec.rangeLength(0) * Fixtures.rowFloats(spec);
      double merge = ns("MergeBench.merge " + layout);
      double inPlace = ns("MergeBench.mergeInPlace " + layout);
      double loop = ns("MergeBench.maxLoop " + layout);
      System.out.printf(
          "%-14s %9d %12.0f %13.0f %12.0f %8.2f %12.2f %12.0f%n",
          layout,
          floats,
          merge,
          inPlace,
          loop,
          inPlace / loop,
          4.0 * floats / inPlace,
          floats / inPlace * 1e3);
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("layout", layout);
      row.put("floats_per_block", floats);
      put(row, "merge_ns", "MergeBench.merge " + layout);
      put(row, "merge_in_place_ns", "MergeBench.mergeInPlace " + layout);
      put(row, "max_loop_ns", "MergeBench.maxLoop " + layout);
      row.put("in_place_over_loop", round(inPlace / loop));
      // GB/s of one block's values (floats x 4 bytes) merged per second
      row.put("merge_gb_s", round(4.0 * floats / merge));
      row.put("merge_in_place_gb_s", round(4.0 * floats / inPlace));
      row.put("max_loop_gb_s", round(4.0 * floats / loop));
      row.put("merge_in_place_mfloats_s", round(floats / inPlace * 1e3));
      rows.add(row);
    }
    return rows;
  }

  List<Map<String, Object>> segments(List<String> layouts, Map<String, Integer> bytes) {
    System.out.println("-- segment encode / strict decode in memory, next to a raw copy --");
    System.out.println(
        "layout             bytes   encode us   decode us  rawcopy us  enc/raw  dec/raw  enc GB/s"
            + "  dec GB/s  raw GB/s");
    List<Map<String, Object>> rows = new ArrayList<>();
    for (String layout : layouts) {
      int size = bytes.get(layout);
      segmentSizes.put(layout, size);
      double enc = ns("SegmentCodecBench.encode " + layout);
      double dec = ns("SegmentCodecBench.decode " + layout);
      double raw = ns("SegmentCodecBench.rawCopy " + layout);
      System.out.printf(
          "%-14s %9d %11.2f %11.2f %11.2f %8.1f %8.1f %9.2f %9.2f %9.2f%n",
          layout,
          size,
          enc / 1e3,
          dec / 1e3,
          raw / 1e3,
          enc / raw,
          dec / raw,
          size / enc,
          size / dec,
          size / raw);
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("layout", layout);
      row.put("segment_bytes", size);
      put(row, "encode_ns", "SegmentCodecBench.encode " + layout);
      put(row, "decode_ns", "SegmentCodecBench.decode " + layout);
      put(row, "raw_copy_ns", "SegmentCodecBench.rawCopy " + layout);
      row.put("encode_over_raw", round(enc / raw));
      row.put("decode_over_raw", round(dec / raw));
      row.put("encode_gb_s", round(size / enc));
      row.put("decode_gb_s", round(size / dec));
      row.put("raw_copy_gb_s", round(size / raw));
      rows.add(row);
    }
    return rows;
  }

  List<Map<String, Object>> replies(int[] batches, Map<String, Object> bytes) {
    System.out.println("-- lookup reply, 2 float fields, serialize + deserialize per message --");
    System.out.printf(
        "%6s %10s %11s %10s %10s   %s%n",
        "B", "kryo ns", "wire ns", "raw ns", "cbor ns", "bytes kryo/wire/raw/cbor");
    List<Map<String, Object>> rows = new ArrayList<>();
    for (int b : batches) {
      @SuppressWarnings("unchecked")
      Map<String, Integer> size = (Map<String, Integer>) bytes.get(Integer.toString(b));
      double kryo = ns("ReplyBench.kryo " + b);
      double wire = ns("ReplyBench.kryoWire " + b);
      double raw = ns("ReplyBench.raw " + b);
      double cbor = ns("ReplyBench.cbor " + b);
      System.out.printf(
          "%6d %10.0f %11.0f %10.0f %10.0f   %d/%d/%d/%d%n",
          b,
          kryo,
          wire,
          raw,
          cbor,
          size.get("kryo"),
          size.get("kryo_wire"),
          size.get("raw"),
          size.get("cbor"));
      Map<String, Object> row = new LinkedHashMap<>();
      row.put("batch", b);
      put(row, "kryo_ns", "ReplyBench.kryo " + b);
      put(row, "kryo_wire_ns", "ReplyBench.kryoWire " + b);
      put(row, "raw_ns", "ReplyBench.raw " + b);
      put(row, "cbor_ns", "ReplyBench.cbor " + b);
      size.forEach((codec, n) -> row.put("bytes_" + codec, n));
      row.put("kryo_over_raw", round(kryo / raw));
      row.put("kryo_wire_over_raw", round(wire / raw));
      row.put("cbor_over_raw", round(cbor / raw));
      rows.add(row);
    }
    return rows;
  }

  /**
   * Three charts, each figure's bar beside its reference's, as a cost per unit of data (lower is
   * better) so that small and large cases share one scale and a slow figure's bar stays visible
   * next to a reference tens of times faster.
   */
  void charts(Path dir, List<String> merges, List<String> segments, int[] batches)
      throws IOException {
    Map<String, Map<String, Double>> merge = new LinkedHashMap<>();
    for (String[] m :
        new String[][] {
          {"merge", "Block.merge (copy + merge)"},
          {"mergeInPlace", "Block.mergeInPlace"},
          {"maxLoop", "MAX loop (reference)"}
        }) {
      Map<String, Double> bars = new LinkedHashMap<>();
      for (String layout : merges) {
        var spec = Fixtures.spec(layout);
        double floats = (double) spec.rangeLength(0) * Fixtures.rowFloats(spec);
        bars.put(layout, ns("MergeBench." + m[0] + " " + layout) / floats * 1000);
      }
      merge.put(m[1], bars);
    }
    Charts.bars(
        dir.resolve("micro-merge.png"),
        "Block merge of two complete ranges",
        "ns per 1000 floats merged",
        merge);
    Map<String, Map<String, Double>> codec = new LinkedHashMap<>();
    for (String[] m :
        new String[][] {
          {"encode", "encode"}, {"decode", "strict decode"}, {"rawCopy", "raw copy (reference)"}
        }) {
      Map<String, Double> bars = new LinkedHashMap<>();
      for (String layout : segments) {
        double kib = segmentSizes.get(layout) / 1024.0;
        bars.put(layout, ns("SegmentCodecBench." + m[0] + " " + layout) / kib);
      }
      codec.put(m[1], bars);
    }
    Charts.bars(
        dir.resolve("micro-segments.png"),
        "Segment encode / decode in memory",
        "ns per KiB of segment",
        codec);
    Map<String, Map<String, Double>> perIndex = new LinkedHashMap<>();
    for (String[] m :
        new String[][] {
          {"kryo", "Kryo (project setup)"},
          {"kryoWire", "Pekko: StatusReply + Kryo (wire)"},
          {"raw", "raw binary"},
          {"cbor", "CBOR"}
        }) {
      Map<String, Double> bars = new LinkedHashMap<>();
      for (int b : batches) {
        bars.put("B=" + b, ns("ReplyBench." + m[0] + " " + b) / b);
      }
      perIndex.put(m[1], bars);
    }
    Charts.bars(
        dir.resolve("micro-reply.png"),
        "Lookup reply, serialize + deserialize (2 float fields)",
        "ns per index",
        perIndex);
  }

  private double ns(String key) {
    double[] s = scores.get(key);
    if (s == null) {
      throw new IllegalStateException("no JMH result for " + key + ", have " + scores.keySet());
    }
    return s[0];
  }

  private void put(Map<String, Object> row, String field, String key) {
    double[] s = scores.get(key);
    row.put(field, round(s[0]));
    if (!Double.isNaN(s[1])) {
      row.put(field + "_error", round(s[1]));
    }
  }

  private static double round(double x) {
    return Math.round(x * 100) / 100.0;
  }
}
