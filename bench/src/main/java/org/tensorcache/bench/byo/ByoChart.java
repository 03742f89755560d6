package org.tensorcache.bench.byo;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * {@code byo.png}: per model, the median examples/s of TensorCache, TRL at batch 8, TRL at its best
 * batch and the bare loop, beside their median peak resident memory. A side left out shows as 0.
 */
final class ByoChart {
  private static final Map<String, String> LABELS =
      Map.of(
          "tensorcache", "TensorCache fill",
          "trl_default", "TRL, batch 8",
          "trl_best", "TRL, best batch",
          "bare_loop", "bare DJL loop");

  private ByoChart() {}

  static void write(Path png, List<ModelRun> models) throws IOException {
    CategoryChart rate =
        chart(
            "Examples/s (higher is better)",
            "examples/s",
            models,
            (m, side) -> zeroIfMissing(m.rate(side)));
    double least = Double.MAX_VALUE;
    for (ModelRun m : models) {
      for (String side : ModelRun.SIDES) {
        least = Math.min(least, zeroIfMissing(m.rate(side)));
      }
    }
    if (least > 0) {
      rate.getStyler().setYAxisLogarithmic(true);
      rate.getStyler().setYAxisMin(Math.pow(10, Math.floor(Math.log10(least / 2))));
    }
    CategoryChart memory =
        chart(
            "Peak resident memory (lower is better)",
            "MiB",
            models,
            (m, side) -> zeroIfMissing(m.peak(side) / 1048576.0));
    Files.createDirectories(png.toAbsolutePath().getParent());
    BitmapEncoder.saveBitmap(
        List.of(rate, memory), 1, 2, png.toString(), BitmapEncoder.BitmapFormat.PNG);
    System.out.println("written " + png);
  }

  private static CategoryChart chart(
      String title, String axis, List<ModelRun> models, BiFunction<ModelRun, String, Double> y) {
    CategoryChart chart =
        new CategoryChartBuilder().width(700).height(520).title(title).yAxisTitle(axis).build();
    chart.getStyler().setLegendPosition(Styler.LegendPosition.OutsideS);
    chart.getStyler().setLegendLayout(Styler.LegendLayout.Horizontal);
    chart.getStyler().setChartBackgroundColor(Color.WHITE);
    List<String> x = models.stream().map(m -> m.name).toList();
    for (String side : ModelRun.SIDES) {
      List<Double> ys = new ArrayList<>();
      for (ModelRun m : models) {
        ys.add(y.apply(m, side));
      }
      chart.addSeries(LABELS.get(side), x, ys);
    }
    return chart;
  }

  private static double zeroIfMissing(double v) {
    return Double.isFinite(v) ? v : 0;
  }
}
