package org.tensorcache.bench.micro;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.results.RunResult;
import org.tensorcache.bench.report.Charts;
import org.tensorcache.bench.report.Table;

/**
 * Turns JMH results into tables, each figure beside its reference, and charts of the same scores as
 * a cost per unit of data (lower is better), so that small and large cases share one scale and a
 * slow figure's bar stays visible next to a reference tens of times faster.
 */
final class MicroReport {
  /** Score and error in ns, by {@code method param}. */
  private final Map<String, double[]> scores = new HashMap<>();

  private final Path dir; // where the charts go

  MicroReport(Collection<RunResult> runs, Path dir) {
    this.dir = dir;
    for (RunResult run : runs) {
      BenchmarkParams params = run.getParams();
      String key = params.getBenchmark().substring(params.getBenchmark().lastIndexOf('.') + 1);
      for (String p : params.getParamsKeys()) {
        key += " " + params.getParam(p);
      }
      var primary = run.getPrimaryResult();
      scores.put(key, new double[] {primary.getScore(), primary.getScoreError()});
    }
  }

  List<Map<String, Object>> merge(List<String> layouts) throws IOException {
    ToDoubleFunction<String> bytes = p -> 4.0 * Fixtures.floats(p); // one block's values
    return new Rows("block merge (element-wise MAX, both blocks complete), per merge", layouts)
        .col("layout", "layout", "%-14s", p -> p)
        .col("floats_per_block", "floats", "%9d", Fixtures::floats)
        .scored("merge_ns", "merge ns", "%12.0f", "merge", "Block.merge (copy + merge)")
        .scored("merge_in_place_ns", "inPlace ns", "%13.0f", "mergeInPlace", "Block.mergeInPlace")
        .scored("max_loop_ns", "maxLoop ns", "%12.0f", "maxLoop", "MAX loop (reference)")
        .col("in_place_over_loop", "ip/loop", "%8.2f", ratio("mergeInPlace", "maxLoop"))
        .json("merge_gb_s", rate("merge", bytes))
        .col("merge_in_place_gb_s", "inPlace GB/s", "%12.2f", rate("mergeInPlace", bytes))
        .json("max_loop_gb_s", rate("maxLoop", bytes))
        .col(
            "merge_in_place_mfloats_s",
            "Mfloats/s",
            "%12.0f",
            rate("mergeInPlace", p -> Fixtures.floats(p) * 1e3))
        .chart(
            "micro-merge.png",
            "Block merge of two complete ranges",
            "ns per 1000 floats merged",
            "",
            p -> Fixtures.floats(p) / 1e3)
        .print();
  }

  List<Map<String, Object>> segments(List<String> layouts, Map<String, Integer> bytes)
      throws IOException {
    ToDoubleFunction<String> size = bytes::get;
    return new Rows("segment encode / strict decode in memory, next to a raw copy", layouts)
        .col("layout", "layout", "%-14s", p -> p)
        .col("segment_bytes", "bytes", "%9d", bytes::get)
        .scored("encode_ns", "encode ns", "%11.0f", "encode", "encode")
        .scored("decode_ns", "decode ns", "%11.0f", "decode", "strict decode")
        .scored("raw_copy_ns", "rawcopy ns", "%11.0f", "rawCopy", "raw copy (reference)")
        .col("encode_over_raw", "enc/raw", "%8.1f", ratio("encode", "rawCopy"))
        .col("decode_over_raw", "dec/raw", "%8.1f", ratio("decode", "rawCopy"))
        .col("encode_gb_s", "enc GB/s", "%9.2f", rate("encode", size))
        .col("decode_gb_s", "dec GB/s", "%9.2f", rate("decode", size))
        .col("raw_copy_gb_s", "raw GB/s", "%9.2f", rate("rawCopy", size))
        .chart(
            "micro-segments.png",
            "Segment encode / decode in memory",
            "ns per KiB of segment",
            "",
            p -> bytes.get(p) / 1024.0)
        .print();
  }

  List<Map<String, Object>> replies(List<String> batches, Map<String, Map<String, Object>> bytes)
      throws IOException {
    return new Rows("lookup reply, 2 float fields, serialize + deserialize per message", batches)
        .col("batch", "B", "%6d", Integer::valueOf)
        .scored("kryo_ns", "kryo ns", "%10.0f", "kryo", "Kryo (project setup)")
        .scored("kryo_wire_ns", "wire ns", "%11.0f", "kryoWire", "Pekko: StatusReply + Kryo (wire)")
        .scored("raw_ns", "raw ns", "%10.0f", "raw", "raw binary")
        .scored("cbor_ns", "cbor ns", "%10.0f", "cbor", "CBOR")
        .col("bytes_kryo", "kryo B", "%8d", p -> bytes.get(p).get("kryo"))
        .col("bytes_kryo_wire", "wire B", "%8d", p -> bytes.get(p).get("kryo_wire"))
        .col("bytes_raw", "raw B", "%8d", p -> bytes.get(p).get("raw"))
        .col("bytes_cbor", "cbor B", "%8d", p -> bytes.get(p).get("cbor"))
        .json("kryo_over_raw", ratio("kryo", "raw"))
        .json("kryo_wire_over_raw", ratio("kryoWire", "raw"))
        .json("cbor_over_raw", ratio("cbor", "raw"))
        .chart(
            "micro-reply.png",
            "Lookup reply, serialize + deserialize (2 float fields)",
            "ns per index",
            "B=",
            Double::parseDouble)
        .print();
  }

  private double[] score(String method, String param) {
    double[] s = scores.get(method + " " + param);
    if (s == null) {
      throw new IllegalStateException(
          "no JMH result for " + method + " " + param + ", have " + scores.keySet());
    }
    return s;
  }

  private double ns(String method, String param) {
    return score(method, param)[0];
  }

  private Function<String, Object> ratio(String method, String reference) {
    return p -> ns(method, p) / ns(reference, p);
  }

  /** {@code amount} per ns of {@code method}: bytes per ns are GB/s. */
  private Function<String, Object> rate(String method, ToDoubleFunction<String> amount) {
    return p -> amount.applyAsDouble(p) / ns(method, p);
  }

  /** A {@link Table} whose cells are functions of the row's param (a layout or a batch size). */
  private final class Rows {
    private final Table table;
    private final List<Function<String, Object>> cells = new ArrayList<>();
    private final Map<String, String> series = new LinkedHashMap<>(); // chart name by method
    private final List<String> params;

    Rows(String title, List<String> params) {
      this.table = new Table(title);
      this.params = params;
    }

    Rows col(String key, String header, String format, Function<String, Object> cell) {
      table.col(key, header, format);
      cells.add(cell);
      return this;
    }

    Rows json(String key, Function<String, Object> cell) {
      return col(key, key, null, cell);
    }

    /** A JMH score's column, its error's in the JSON only (NaN, so none, where JMH gave none). */
    Rows scored(String key, String header, String format, String method, String chartName) {
      series.put(method, chartName);
      col(key, header, format, p -> ns(method, p));
      return json(key + "_error", p -> score(method, p)[1]);
    }

    /** Charts the scores so far: per row a bar {@code label + param}, over {@code unit}. */
    Rows chart(String png, String title, String yAxis, String label, ToDoubleFunction<String> unit)
        throws IOException {
      Map<String, Map<String, Double>> bars = new LinkedHashMap<>();
      series.forEach(
          (method, name) -> {
            Map<String, Double> perParam = new LinkedHashMap<>();
            for (String p : params) {
              perParam.put(label + p, ns(method, p) / unit.applyAsDouble(p));
            }
            bars.put(name, perParam);
          });
      Charts.bars(dir.resolve(png), title, yAxis, bars);
      return this;
    }

    List<Map<String, Object>> print() {
      for (String p : params) {
        table.row(cells.stream().map(c -> c.apply(p)).toArray());
      }
      return table.print();
    }
  }
}
