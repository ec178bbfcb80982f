package io.dlock.torture;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Reads a target's {@link ServerClock} every {@link #EVERY} during a run and sets each reading
 * beside the machine's monotonic clock (the one the workers count leases on, the clock-offset
 * scenario aside, which offsets only the workers' own): the offset between the two moves by
 * microseconds a second while both run true, and a step of the server's wall clock (a time
 * synchronisation setting it, an operator) shows as a jump. Every reading goes to {@code
 * server-clock.history}; {@link #stop} sums them up for the report, naming every step.
 *
 * <p>A reading is bracketed by two monotonic reads: the server's instant lies between them, so two
 * offsets that differ by more than both halves of their brackets and {@link #STEP} differ by a
 * step, not by a slow answer.
 */
final class ServerClockSampler {
  static final Duration EVERY = Duration.ofMillis(250);

  /** A move of the offset beyond the readings' uncertainty and this is a step. */
  static final Duration STEP = Duration.ofMillis(100);

  private final ServerClock clock;
  private final Writer history;
  private final ScheduledExecutorService thread =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "server-clock");
            t.setDaemon(true);
            return t;
          });
  private final long startNanos = System.nanoTime();

  // The sampler's thread only; read by stop() after it has ended.
  private final List<String> steps = new ArrayList<>();
  private int samples;
  private int failed;
  private double firstOffset;
  private double lowest;
  private double highest;
  private double lastOffset;
  private double lastHalf;

  private ServerClockSampler(ServerClock clock, Path dir) {
    this.clock = clock;
    try {
      this.history =
          Files.newBufferedWriter(dir.resolve("server-clock.history"), StandardCharsets.UTF_8);
      history.write(
          "# "
              + clock.description()
              + " against System.nanoTime(): nanos (the reading's middle),"
              + " server ms, offset ms from the first reading, reading's half-width ms\n");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Starts sampling the target's server clock, if it has one ({@link ServerClock#of}). */
  static Optional<ServerClockSampler> start(Target target, Path dir) {
    return ServerClock.of(target)
        .map(
            clock -> {
              ServerClockSampler sampler = new ServerClockSampler(clock, dir);
              sampler.thread.scheduleWithFixedDelay(
                  sampler::sample, 0, EVERY.toMillis(), TimeUnit.MILLISECONDS);
              return sampler;
            });
  }

  /** A sampler that does not sample: readings are given to {@link #record}. */
  static ServerClockSampler forTest(ServerClock clock, Path dir) {
    return new ServerClockSampler(clock, dir);
  }

  /** One reading; a failed one (the server restarting, a fault on its path) is counted. */
  void sample() {
    long before = System.nanoTime();
    long server;
    try {
      server = clock.millis();
    } catch (Exception e) {
      failed++;
      return;
    }
    long after = System.nanoTime();
    record(before, server, after);
  }

  /** Notes a reading of {@code serverMillis} taken between monotonic {@code before} and after. */
  void record(long before, long serverMillis, long after) {
    long middle = before + (after - before) / 2;
    double half = (after - before) / 2e6;
    double offset = serverMillis - middle / 1e6;
    if (samples == 0) {
      firstOffset = offset;
      lowest = 0;
      highest = 0;
    } else {
      double moved = offset - lastOffset;
      if (Math.abs(moved) > lastHalf + half + STEP.toMillis()) {
        steps.add(
            String.format(Locale.ROOT, "%+.0f ms at %.2f s", moved, (middle - startNanos) / 1e9));
      }
    }
    double relative = offset - firstOffset;
    lowest = Math.min(lowest, relative);
    highest = Math.max(highest, relative);
    lastOffset = offset;
    lastHalf = half;
    samples++;
    try {
      history.write(
          String.format(Locale.ROOT, "%d %d %.3f %.3f%n", middle, serverMillis, relative, half));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Stops sampling; what the readings showed, for the report. */
  String stop() {
    thread.shutdownNow();
    try {
      if (!thread.awaitTermination(10, TimeUnit.SECONDS)) {
        return clock.description() + ": the sampler did not stop";
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return clock.description() + ": interrupted";
    } finally {
      clock.close();
      try {
        history.close();
      } catch (IOException e) {
        // the summary below still holds
      }
    }
    return summary();
  }

  /** What the readings so far showed (the sampler's thread, or after it ended). */
  String summary() {
    StringBuilder s =
        new StringBuilder(clock.description()).append(" against the monotonic clock: ");
    s.append(samples).append(" readings");
    if (failed > 0) {
      s.append(" (").append(failed).append(" failed)");
    }
    if (samples == 0) {
      return s.toString();
    }
    s.append(
        String.format(
            Locale.ROOT, ", offset within %+.0f..%+.0f ms of the first", lowest, highest));
    if (steps.isEmpty()) {
      s.append(", no step over ").append(STEP.toMillis()).append(" ms");
    } else {
      s.append(", **steps**: ").append(String.join(", ", steps));
    }
    return s.toString();
  }

  /** Whether a step was seen. */
  boolean stepped() {
    return !steps.isEmpty();
  }
}
