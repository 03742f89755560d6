package org.tensorcache.bench.report;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.style.Styler;

/** PNG bar charts of benchmark figures, a figure and its reference side by side. */
public final class Charts {
  private Charts() {}

  /**
   * Writes {@code png}: one group of bars per category (the keys of each series, in order), one bar
   * colour per series (for example "TensorCache" and "float[] gather").
   */
  public static void bars(
      Path png, String title, String yAxis, Map<String, Map<String, Double>> series)
      throws IOException {
    bars(png, title, yAxis, series, false);
  }

  /** On a logarithmic y axis when {@code logY}. */
  public static void bars(
      Path png, String title, String yAxis, Map<String, Map<String, Double>> series, boolean logY)
      throws IOException {
    CategoryChart chart =
        new CategoryChartBuilder().width(900).height(500).title(title).yAxisTitle(yAxis).build();
    chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
    chart.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
    chart.getStyler().setLabelsVisible(false);
    if (logY) {
      // bars start at the axis' minimum (0 on a linear axis): a power of ten below half the least
      double least = Double.MAX_VALUE;
      for (Map<String, Double> s : series.values()) {
        for (double y : s.values()) {
          least = Math.min(least, y);
        }
      }
      chart.getStyler().setYAxisLogarithmic(true);
      chart.getStyler().setYAxisMin(Math.pow(10, Math.floor(Math.log10(least / 2))));
    }
    for (var s : series.entrySet()) {
      List<String> x = new ArrayList<>(s.getValue().keySet());
      List<Double> y = new ArrayList<>(s.getValue().values());
      chart.addSeries(s.getKey(), x, y);
    }
    Files.createDirectories(png.toAbsolutePath().getParent());
    BitmapEncoder.saveBitmap(chart, png.toString(), BitmapEncoder.BitmapFormat.PNG);
    System.out.println("written " + png);
  }
}
