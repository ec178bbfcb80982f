package io.dlock.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Samples the machine's load while the benchmark runs: load average and CPU busy share. */
final class MachineLoad implements AutoCloseable {
  private final List<Double> load1 = new ArrayList<>();
  private final List<Double> busy = new ArrayList<>();
  private final Thread sampler;
  private volatile boolean stop;
  private final String atStart;

  MachineLoad() {
    atStart = loadAverage();
    sampler = new Thread(this::sample, "machine-load");
    sampler.setDaemon(true);
    sampler.start();
  }

  private void sample() {
    long[] last = cpuTimes();
    while (!stop) {
      try {
        Thread.sleep(2000);
      } catch (InterruptedException e) {
        return;
      }
      long[] now = cpuTimes();
      synchronized (this) {
        String l = loadAverage();
        if (!l.isEmpty()) {
          load1.add(Double.parseDouble(l.split(" ")[0]));
        }
        if (now != null && last != null && now[1] > last[1]) {
          busy.add((now[0] - last[0]) / (double) (now[1] - last[1]));
        }
      }
      last = now;
    }
  }

  /** {busy jiffies, total jiffies} from /proc/stat. */
  private static long[] cpuTimes() {
    try {
      String[] f = Files.readAllLines(Path.of("/proc/stat")).get(0).trim().split("\\s+");
      long total = 0;
      for (int i = 1; i < f.length; i++) {
        total += Long.parseLong(f[i]);
      }
      long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]);
      return new long[] {total - idle, total};
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  static String loadAverage() {
    try {
      String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
      return f[0] + " " + f[1] + " " + f[2];
    } catch (IOException | RuntimeException e) {
      return "";
    }
  }

  /** One line for the report. */
  synchronized String summary() {
    double mean = load1.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
    double max = load1.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN);
    double cpu = busy.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
    return String.format(
        Locale.ROOT,
        "load average (1/5/15 min) %s at the start and %s at the end; 1-min load sampled every"
            + " 2 s: mean %.1f, max %.1f; all CPUs busy %.0f%% of the time on average"
            + " (benchmark, its servers and everything else on the machine)",
        atStart,
        loadAverage(),
        mean,
        max,
        cpu * 100);
  }

  @Override
  public void close() {
    stop = true;
    sampler.interrupt();
  }
}
