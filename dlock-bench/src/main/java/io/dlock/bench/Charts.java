package io.dlock.bench;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.HdrHistogram.Histogram;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.markers.SeriesMarkers;

/** PNG charts written next to the report, with XChart. */
final class Charts {
  private Charts() {}

  /** Distinct colors, so that no two series of a chart look alike. */
  private static final java.awt.Color[] PALETTE = {
    new java.awt.Color(0x1f77b4),
    new java.awt.Color(0xd62728),
    new java.awt.Color(0x2ca02c),
    new java.awt.Color(0x9467bd),
    new java.awt.Color(0xff7f0e),
    new java.awt.Color(0x17becf),
    new java.awt.Color(0x8c564b),
    new java.awt.Color(0xe377c2),
    new java.awt.Color(0x7f7f7f),
    new java.awt.Color(0xbcbd22)
  };

  /**
   * Latency by percentile: x is 1/(1 - percentile) on a log axis (10 = p90, 100 = p99, 1000 =
   * p99.9), y the latency in microseconds on a log axis.
   */
  static void percentiles(Path file, String title, String yTitle, Map<String, Histogram> series)
      throws IOException {
    XYChart chart =
        new XYChartBuilder()
            .width(1000)
            .height(560)
            .title(title)
            .xAxisTitle("percentile  (1/(1-p): 2 = p50, 10 = p90, 100 = p99, 1000 = p99.9)")
            .yAxisTitle(yTitle)
            .build();
    chart.getStyler().setXAxisLogarithmic(true);
    chart.getStyler().setYAxisLogarithmic(true);
    chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
    chart.getStyler().setMarkerSize(0);
    chart.getStyler().setYAxisDecimalPattern("#,##0");
    chart.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
    for (Map.Entry<String, Histogram> e : series.entrySet()) {
      Histogram h = e.getValue();
      if (h.getTotalCount() == 0) {
        continue;
      }
      List<Double> xs = new ArrayList<>();
      List<Double> ys = new ArrayList<>();
      double maxX = Math.min(10_000, h.getTotalCount());
      for (int k = 0; Math.pow(10, k / 20.0) <= maxX; k++) {
        double x = Math.pow(10, k / 20.0);
        double p = 100 * (1 - 1 / x);
        xs.add(x);
        ys.add(Math.max(1, h.getValueAtPercentile(p) / 1e3));
      }
      XYSeries s = chart.addSeries(e.getKey(), xs, ys);
      s.setMarker(SeriesMarkers.NONE);
      s.setLineColor(PALETTE[chart.getSeriesMap().size() % PALETTE.length]);
      if (e.getKey().startsWith("ZooKeeper")) {
        s.setLineStyle(org.knowm.xchart.style.lines.SeriesLines.DASH_DASH);
      }
    }
    BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
  }

  /** Lines through points {x: held locks, y: value}, log axes. */
  static void lines(
      Path file, String title, String xTitle, String yTitle, Map<String, double[][]> series)
      throws IOException {
    XYChart chart =
        new XYChartBuilder()
            .width(1000)
            .height(560)
            .title(title)
            .xAxisTitle(xTitle)
            .yAxisTitle(yTitle)
            .build();
    chart.getStyler().setXAxisLogarithmic(true);
    chart.getStyler().setYAxisLogarithmic(true);
    chart.getStyler().setLegendPosition(Styler.LegendPosition.InsideNW);
    chart.getStyler().setChartBackgroundColor(java.awt.Color.WHITE);
    chart.getStyler().setYAxisDecimalPattern("#,##0.#");
    chart.getStyler().setXAxisDecimalPattern("#,##0");
    for (Map.Entry<String, double[][]> e : series.entrySet()) {
      double[] xs = e.getValue()[0];
      double[] ys = e.getValue()[1].clone();
      for (int i = 0; i < ys.length; i++) {
        ys[i] = Math.max(0.01, ys[i]);
      }
      XYSeries s = chart.addSeries(e.getKey(), xs, ys);
      s.setLineColor(PALETTE[chart.getSeriesMap().size() % PALETTE.length]);
      s.setMarkerColor(PALETTE[chart.getSeriesMap().size() % PALETTE.length]);
    }
    BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
  }
}
