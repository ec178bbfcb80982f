package io.dlock.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import org.HdrHistogram.Histogram;

/** Rows and numbers for the Markdown tables, and a series of per-round figures with its spread. */
final class Fmt {
  private Fmt() {}

  /** One Markdown table row. */
  static String row(String... cells) {
    return "| " + String.join(" | ", cells) + " |\n";
  }

  /** A figure with about 3 significant digits. */
  static String num(double v) {
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      return "n/a";
    }
    double a = Math.abs(v);
    if (a >= 1000) {
      return String.format(Locale.ROOT, "%,.0f", v);
    }
    if (a >= 100) {
      return String.format(Locale.ROOT, "%.0f", v);
    }
    if (a >= 10) {
      return String.format(Locale.ROOT, "%.1f", v);
    }
    return String.format(Locale.ROOT, "%.2f", v);
  }

  static String ratio(double v) {
    return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%.2f", v);
  }

  /** A percentile of a histogram of nanoseconds, in microseconds. */
  static String micros(Histogram h, double percentile) {
    return h.getTotalCount() == 0 ? "n/a" : num(h.getValueAtPercentile(percentile) / 1e3);
  }

  /** A share of the rounds as {@code median% (min–max%)}. */
  static String percent(Series s) {
    if (s.isEmpty()) {
      return "n/a";
    }
    return String.format(
        Locale.ROOT, "%.0f%% (%.0f–%.0f%%)", s.median() * 100, s.min() * 100, s.max() * 100);
  }

  /** Per-round values of one figure. */
  static final class Series {
    final List<Double> values = new ArrayList<>();

    void add(double v) {
      values.add(v);
    }

    boolean isEmpty() {
      return values.isEmpty();
    }

    double median() {
      if (values.isEmpty()) {
        return Double.NaN;
      }
      double[] s = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
      return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
    }

    double min() {
      return values.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
    }

    double max() {
      return values.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
    }

    /** {@code median (min–max)} over the rounds. */
    String spread() {
      if (values.isEmpty()) {
        return "n/a";
      }
      if (values.size() == 1) {
        return num(median());
      }
      return num(median()) + " (" + num(min()) + "–" + num(max()) + ")";
    }

    /** The ratio of the medians, with the range of the round-by-round ratios. */
    String ratioTo(Series other) {
      double r = median() / other.median();
      int n = Math.min(values.size(), other.values.size());
      if (n < 2) {
        return ratio(r);
      }
      double[] paired = new double[n];
      for (int i = 0; i < n; i++) {
        paired[i] = values.get(i) / other.values.get(i);
      }
      Arrays.sort(paired);
      return ratio(r) + " (" + ratio(paired[0]) + "–" + ratio(paired[n - 1]) + ")";
    }
  }
}
