package io.dlock.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * The goals dlock is held to, each with the figure measured for it and whether it was met: the
 * table of the report's Targets section.
 */
final class Targets {
  private final List<String[]> rows = new ArrayList<>();

  /** A goal met when {@code value >= goal}; the ratio printed is value / goal. */
  void atLeast(String name, String measured, double value, double goal) {
    add(name, measured, value, goal, true);
  }

  /** A goal met when {@code value <= goal}; the ratio printed is value / goal. */
  void atMost(String name, String measured, double value, double goal) {
    add(name, measured, value, goal, false);
  }

  /** A goal this run could not measure, say why in {@code measured}. */
  void notMeasured(String name, String measured) {
    rows.add(new String[] {name, measured, "n/a", "n/a", "n/a", "not measured"});
  }

  private void add(
      String name, String measured, double value, double goal, boolean higherIsBetter) {
    boolean met = higherIsBetter ? value >= goal : value <= goal;
    rows.add(
        new String[] {
          name,
          measured,
          Fmt.num(value),
          (higherIsBetter ? "≥ " : "≤ ") + Fmt.num(goal),
          Fmt.ratio(value / goal),
          met ? "**met**" : "**missed**"
        });
  }

  /** The section's text: how to read the table, then the table. */
  String table() {
    StringBuilder t = new StringBuilder();
    t.append(
        "The figure is the ratio (or count) the target is stated in; figure/goal says by how"
            + " much it is met or missed (≥ 1 meets a \"≥\" goal, ≤ 1 meets a \"≤\" goal).\n\n"
            + "| target | measured | figure | goal | figure/goal | verdict |\n"
            + "|---|---|---|---|---|---|\n");
    for (String[] row : rows) {
      t.append(Fmt.row(row));
    }
    return t.toString();
  }
}
