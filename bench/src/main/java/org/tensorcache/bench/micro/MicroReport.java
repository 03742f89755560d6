package org.tensorcache.bench.micro;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.results.RunResult;
import org.tensorcache.bench.report.Charts;
import org.tensorcache.bench.report.Table;

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
    Table t =
        new Table("block merge (element-wise MAX, both blocks complete), per merge")
            .col("layout", "layout", "%-14s")
            .col("floats_per_block", "floats", "%9d");
    scored(t, "merge_ns", "merge ns", "%12.0f");
    scored(t, "merge_in_place_ns", "inPlace ns", "%13.0f");
    scored(t, "max_loop_ns", "maxLoop ns", "%12.0f");
    t.col("in_place_over_loop", "ip/loop", "%8.2f")
        .json("merge_gb_s")
        .col("merge_in_place_gb_s", "inPlace GB/s", "%12.2f")
        .json("max_loop_gb_s")
        .col("merge_in_place_mfloats_s", "Mfloats/s", "%12.0f");
    for (String layout : layouts) {
      var spec = Fixtures.spec(layout);
      long floats = (long) spec.rangeLength(0) * Fixtures.rowFloats(spec);
      double merge = ns("MergeBench.merge " + layout);
      double inPlace = ns("MergeBench.mergeInPlace " + layout);
      double loop = ns("MergeBench.maxLoop " + layout);
      t.row(
          layout,
          floats,
          merge,
          error("MergeBench.merge " + layout),
          inPlace,
          error("MergeBench.mergeInPlace " + layout),
          loop,
          error("MergeBench.maxLoop " + layout),
          inPlace / loop,
          // GB/s of one block's values (floats x 4 bytes) merged per second
          4.0 * floats / merge,
          4.0 * floats / inPlace,
          4.0 * floats / loop,
          floats / inPlace * 1e3);
    }
    return t.print();
  }

  List<Map<String, Object>> segments(List<String> layouts, Map<String, Integer> bytes) {
    Table t =
        new Table("segment encode / strict decode in memory, next to a raw copy")
            .col("layout", "layout", "%-14s")
            .col("segment_bytes", "bytes", "%9d");
    scored(t, "encode_ns", "encode ns", "%11.0f");
    scored(t, "decode_ns", "decode ns", "%11.0f");
    scored(t, "raw_copy_ns", "rawcopy ns", "%11.0f");
    t.col("encode_over_raw", "enc/raw", "%8.1f")
        .col("decode_over_raw", "dec/raw", "%8.1f")
        .col("encode_gb_s", "enc GB/s", "%9.2f")
        .col("decode_gb_s", "dec GB/s", "%9.2f")
        .col("raw_copy_gb_s", "raw GB/s", "%9.2f");
    for (String layout : layouts) {
      int size = bytes.get(layout);
      segmentSizes.put(layout, size);
      String e = "SegmentCodecBench.encode " + layout;
      String d = "SegmentCodecBench.decode " + layout;
      String r = "SegmentCodecBench.rawCopy " + layout;
      double enc = ns(e);
      double dec = ns(d);
      double raw = ns(r);
      t.row(
          layout,
          size,
          enc,
          error(e),
          dec,
          error(d),
          raw,
          error(r),
          enc / raw,
          dec / raw,
          size / enc,
          size / dec,
          size / raw);
    }
    return t.print();
  }

  List<Map<String, Object>> replies(int[] batches, Map<String, Object> bytes) {
    Table t = new Table("lookup reply, 2 float fields, serialize + deserialize per message");
    t.col("batch", "B", "%6d");
    scored(t, "kryo_ns", "kryo ns", "%10.0f");
    scored(t, "kryo_wire_ns", "wire ns", "%11.0f");
    scored(t, "raw_ns", "raw ns", "%10.0f");
    scored(t, "cbor_ns", "cbor ns", "%10.0f");
    t.col("bytes_kryo", "kryo B", "%8d")
        .col("bytes_kryo_wire", "wire B", "%8d")
        .col("bytes_raw", "raw B", "%8d")
        .col("bytes_cbor", "cbor B", "%8d")
        .json("kryo_over_raw")
        .json("kryo_wire_over_raw")
        .json("cbor_over_raw");
    for (int b : batches) {
      @SuppressWarnings("unchecked")
      Map<String, Integer> size = (Map<String, Integer>) bytes.get(Integer.toString(b));
      double kryo = ns("ReplyBench.kryo " + b);
      double wire = ns("ReplyBench.kryoWire " + b);
      double raw = ns("ReplyBench.raw " + b);
      double cbor = ns("ReplyBench.cbor " + b);
      t.row(
          b,
          kryo,
          error("ReplyBench.kryo " + b),
          wire,
          error("ReplyBench.kryoWire " + b),
          raw,
          error("ReplyBench.raw " + b),
          cbor,
          error("ReplyBench.cbor " + b),
          size.get("kryo"),
          size.get("kryo_wire"),
          size.get("raw"),
          size.get("cbor"),
          kryo / raw,
          wire / raw,
          cbor / raw);
    }
    return t.print();
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

  /** A JMH score's column and, in the JSON only, its error's. */
  private static void scored(Table t, String key, String header, String format) {
    t.col(key, header, format).json(key + "_error");
  }

  /** The error of a JMH score, null where JMH gave none (a single fork and iteration). */
  private Double error(String key) {
    double e = scores.get(key)[1];
    return Double.isNaN(e) ? null : e;
  }
}
