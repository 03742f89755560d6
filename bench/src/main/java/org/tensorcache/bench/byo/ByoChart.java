package org.tensorcache.bench.byo;

import java.awt.Color;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.BiFunction;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/**
 * {@code byo.png}: per model, the median examples/s of the four sides (a logarithmic axis), beside
 * their median peak resident memory. A side left out shows as 0.
 */
final class ByoChart {
  private static final List<String> LABELS =
      List.of("TensorCache fill", "TRL, batch 8", "TRL, best batch", "bare DJL loop");

  private ByoChart() {}

  static void write(Path png, List<ModelRun> models) throws IOException {
    CategoryChart rate =
        chart("Examples/s (higher is better)", "examples/s", models, ModelRun::rate);
    double least =
        models.stream()
            .flatMap(m -> ModelRun.SIDES.stream().map(side -> zeroIfMissing(m.rate(side))))
            .min(Double::compare)
            .orElse(0.0);
    if (least > 0) {
      rate.getStyler().setYAxisLogarithmic(true);
      rate.getStyler().setYAxisMin(Math.pow(10, Math.floor(Math.log10(least / 2))));
    }
    CategoryChart memory =
        chart("Peak resident memory (lower is better)", "MiB", models, ModelRun::peak);
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
    for (int s = 0; s < LABELS.size(); s++) {
      String side = ModelRun.SIDES.get(s);
      chart.addSeries(
          LABELS.get(s), x, models.stream().map(m -> zeroIfMissing(y.apply(m, side))).toList());
    }
    return chart;
  }

  private static double zeroIfMissing(double v) {
    return Double.isFinite(v) ? v : 0;
  }
}
