package io.dlock.bench;

import static io.dlock.bench.Fmt.row;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockEventListener;
import io.dlock.redis.RedisLockSettings;
import io.dlock.redis.RedisLocks;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * Thousands of virtual threads blocked in {@code acquire} on Redis, on one lock and spread over
 * 1,000 locks: whether any carrier thread was pinned (JFR's {@code jdk.VirtualThreadPinned}), the
 * heap each waiter costs, and the hand-off gap once the holder lets go. Virtual threads need JDK
 * 21; on an older JVM the benchmark runs this part in a child JVM of a newer JDK it finds ({@code
 * DLOCK_BENCH_JAVA21}, else {@code /usr/lib/jvm/*}), or reports it not measured.
 */
final class VirtualThreadWaiters {
  private static final String ROW = "ROW\t";
  private static final String PINNED = "PINNED\t";

  private VirtualThreadWaiters() {}

  static void run(RunPlan plan, MarkdownReport report) throws Exception {
    BenchmarkMain.progress("virtual-thread waiters");
    StringBuilder t = report.section(MarkdownReport.VIRTUAL_THREADS);
    int waiters = plan.quick() ? 500 : 10_000;
    List<String> lines;
    String jvm;
    if (Runtime.version().feature() >= 21) {
      lines = measure(waiters);
      jvm = Runtime.version().toString() + " (this JVM)";
    } else {
      Optional<Path> java = newerJava();
      if (java.isEmpty()) {
        report
            .targets()
            .notMeasured(
                "Virtual threads: no pinned carrier thread with " + waiters + " waiters",
                "needs JDK 21+: set DLOCK_BENCH_JAVA21 to its java");
        t.append("Not measured: this JVM is older than 21 and no JDK 21+ was found.\n");
        return;
      }
      Process child =
          new ProcessBuilder(
                  java.get().toString(),
                  "-cp",
                  System.getProperty("java.class.path"),
                  VirtualThreadWaiters.class.getName(),
                  Integer.toString(waiters))
              .redirectError(ProcessBuilder.Redirect.INHERIT)
              .start();
      lines = new ArrayList<>();
      try (BufferedReader out =
          new BufferedReader(
              new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
        for (String line = out.readLine(); line != null; line = out.readLine()) {
          lines.add(line);
        }
      }
      if (child.waitFor() != 0) {
        throw new IllegalStateException("the virtual-thread child JVM failed: " + lines);
      }
      jvm = lines.stream().filter(l -> l.startsWith("JVM\t")).findFirst().orElse("JVM\t?");
      jvm = jvm.substring(4) + " (a child JVM: " + java.get() + ")";
    }
    t.append(
        "Virtual threads (one per waiter) block in `acquire` on one Redis client while another"
            + " client holds the locks; then the holder releases them and every waiter releases"
            + " as soon as it is granted. JVM: "
            + jvm
            + ". Pinned: `jdk.VirtualThreadPinned` events recorded with JFR (threshold 0) from"
            + " the first acquire to the last release. Heap per waiter: used heap after full GCs"
            + " with every waiter parked, minus before, divided by the waiters. The hand-off gap"
            + " runs from the previous holder's release call to the next holder's acquire"
            + " returning, on the same lock.\n\n");
    t.append(
        "| waiters | locks | pinned events | heap bytes per waiter | all granted in ms | gap p50"
            + " µs | gap p99 µs | gap max µs |\n|---|---|---|---|---|---|---|---|\n");
    long pinned = 0;
    for (String line : lines) {
      if (line.startsWith(ROW)) {
        t.append(row(line.substring(ROW.length()).split("\t")));
      } else if (line.startsWith(PINNED)) {
        pinned += Long.parseLong(line.substring(PINNED.length()));
      }
    }
    report
        .targets()
        .atMost(
            "Virtual threads: no pinned carrier thread with " + waiters + " waiters",
            pinned + " jdk.VirtualThreadPinned events",
            pinned,
            0);
  }

  /** A java of JDK 21 or later: {@code DLOCK_BENCH_JAVA21}, else the newest under /usr/lib/jvm. */
  private static Optional<Path> newerJava() throws Exception {
    String given = System.getenv("DLOCK_BENCH_JAVA21");
    if (given != null && !given.isBlank()) {
      return Optional.of(Path.of(given));
    }
    Path jvms = Path.of("/usr/lib/jvm");
    if (!Files.isDirectory(jvms)) {
      return Optional.empty();
    }
    try (Stream<Path> homes = Files.list(jvms)) {
      return homes
          .filter(home -> Files.isExecutable(home.resolve("bin/java")))
          .filter(home -> featureOf(home) >= 21)
          .max((a, b) -> Integer.compare(featureOf(a), featureOf(b)))
          .map(home -> home.resolve("bin/java"));
    }
  }

  /** The feature release a JDK home's {@code release} file gives, or 0. */
  private static int featureOf(Path home) {
    try {
      for (String line : Files.readAllLines(home.resolve("release"))) {
        if (line.startsWith("JAVA_VERSION=")) {
          String v = line.substring("JAVA_VERSION=".length()).replace("\"", "");
          return Integer.parseInt(v.split("[.+-]")[0]);
        }
      }
    } catch (Exception e) {
      // not a JDK we can read: skip it
    }
    return 0;
  }

  /** The child JVM's entry: measures and prints tab-separated lines for the parent. */
  public static void main(String[] args) throws Exception {
    System.out.println("JVM\t" + Runtime.version());
    for (String line : measure(Integer.parseInt(args[0]))) {
      System.out.println(line);
    }
    System.exit(0);
  }

  private static List<String> measure(int waiters) throws Exception {
    List<String> lines = new ArrayList<>();
    try (RedisAdmin server = RedisAdmin.startServer()) {
      for (int locks : new int[] {1, 1_000}) {
        lines.addAll(scenario(server.uri(), waiters, locks));
      }
    }
    return lines;
  }

  private static List<String> scenario(String uri, int waiters, int locks) throws Exception {
    CountDownLatch allWaiting = new CountDownLatch(waiters);
    LockEventListener countWaits =
        new LockEventListener() {
          @Override
          public void waiting(String lockName) {
            allWaiting.countDown();
          }
        };
    Recording jfr = new Recording();
    jfr.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
    ExecutorService virtualThreads = virtualThreadPerTask();
    try (LockClient holder = RedisLocks.newClient(uri);
        LockClient client =
            RedisLocks.newClient(
                RedisLockSettings.of(uri),
                LockClientOptions.defaults().withEventListener(countWaits))) {
      String prefix = "vt-" + locks + "-";
      List<Lease> held = new ArrayList<>();
      for (int i = 0; i < locks; i++) {
        held.add(holder.lock(prefix + i).tryAcquire().orElseThrow());
      }
      long heapBefore = HeldLocks.usedHeap();
      jfr.start();
      AtomicLongArray releaseStart = new AtomicLongArray(locks);
      Histogram gaps = new ConcurrentHistogram(Duration.ofMinutes(10).toNanos(), 3);
      CountDownLatch allGranted = new CountDownLatch(waiters);
      AtomicReference<Throwable> failure = new AtomicReference<>();
      for (int w = 0; w < waiters; w++) {
        int lock = w % locks;
        virtualThreads.execute(
            () -> {
              try {
                Lease lease = client.lock(prefix + lock).acquire(Duration.ofMinutes(5));
                gaps.recordValue(Math.max(0, System.nanoTime() - releaseStart.get(lock)));
                releaseStart.set(lock, System.nanoTime());
                lease.release();
                allGranted.countDown();
              } catch (Throwable e) {
                failure.compareAndSet(null, e);
                allGranted.countDown();
              }
            });
      }
      if (!allWaiting.await(5, TimeUnit.MINUTES)) {
        throw new IllegalStateException("not every waiter started waiting in 5 minutes");
      }
      long heapWaiting = HeldLocks.usedHeap();
      long releasedAt = System.nanoTime();
      for (int i = 0; i < locks; i++) {
        releaseStart.set(i, System.nanoTime());
        held.get(i).release();
      }
      boolean done = allGranted.await(5, TimeUnit.MINUTES);
      long allGrantedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - releasedAt);
      if (failure.get() != null) {
        throw new IllegalStateException("a virtual-thread waiter failed", failure.get());
      }
      if (!done) {
        throw new IllegalStateException("not every waiter was granted in 5 minutes");
      }
      jfr.stop();
      long pinned = countEvents(jfr, "jdk.VirtualThreadPinned");
      List<String> lines = new ArrayList<>();
      lines.add(
          ROW
              + String.join(
                  "\t",
                  String.format("%,d", waiters),
                  String.format("%,d", locks),
                  Long.toString(pinned),
                  Fmt.num((heapWaiting - heapBefore) / (double) waiters),
                  Fmt.num(allGrantedMs),
                  Fmt.micros(gaps, 50),
                  Fmt.micros(gaps, 99),
                  Fmt.micros(gaps, 100)));
      lines.add(PINNED + pinned);
      return lines;
    } finally {
      jfr.close();
      virtualThreads.shutdownNow();
    }
  }

  private static long countEvents(Recording recording, String eventName) throws Exception {
    Path file = Files.createTempFile("dlock-bench-vt", ".jfr");
    try {
      recording.dump(file);
      long n = 0;
      for (RecordedEvent e : RecordingFile.readAllEvents(file)) {
        if (e.getEventType().getName().equals(eventName)) {
          n++;
          // Where it pinned, for whoever reads the run's output (the report keeps the count).
          System.err.println("[dlock-bench] " + eventName + ": " + e.getStackTrace());
        }
      }
      return n;
    } finally {
      Files.deleteIfExists(file);
    }
  }

  /** {@code Executors.newVirtualThreadPerTaskExecutor()}, called reflectively (built for 17). */
  private static ExecutorService virtualThreadPerTask() throws Exception {
    return (ExecutorService)
        Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
  }
}
