package io.dlock.spi;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * The one way the core and every backend make threads: a bounded executor for blocking driver calls
 * (JDBC, blocking Curator calls), a single timer thread, and named daemon threads. Whoever creates
 * one shuts it down when it closes; no thread made here keeps a JVM alive.
 *
 * <p>Blocking calls run on virtual threads where the JDK runs them without pinning its carriers in
 * {@code synchronized} code (JDK 24 and later, JEP 491: database drivers and the ZooKeeper client
 * block inside {@code synchronized}), and on daemon platform threads before that. Either way at
 * most the given number run at once and the rest wait in a queue, so a slow server never costs more
 * running calls (or connections) than the bound.
 */
public final class DriverThreads {
  /** The JDK feature release from which virtual threads are used for blocking calls. */
  static final int VIRTUAL_FROM_FEATURE = 24;

  private static final boolean VIRTUAL =
      Runtime.version().feature() >= VIRTUAL_FROM_FEATURE && virtualThreads("probe-") != null;

  private DriverThreads() {}

  /**
   * An executor for blocking calls that runs at most {@code maxConcurrent} at once; the others wait
   * in an unbounded queue, in order. Threads are made only as concurrency needs them, the one idle
   * longest is used last, and idle threads end after 30 seconds.
   *
   * @param name names its threads {@code name-call-1}, {@code name-call-2}, ...
   * @param maxConcurrent from 1 to 8192
   */
  public static ExecutorService blockingCalls(String name, int maxConcurrent) {
    if (maxConcurrent < 1 || maxConcurrent > 8192) {
      throw new IllegalArgumentException(
          "maxConcurrent must be from 1 to 8192, but was " + maxConcurrent);
    }
    return new BoundedCallExecutor(
        maxConcurrent, 30, TimeUnit.SECONDS, callThreads(name + "-call-"));
  }

  /**
   * An executor that runs every task at once on a thread of its own (reused once idle, ended after
   * 30 seconds idle): for tasks whose number something else bounds, and which must never wait for
   * one another, such as the I/O of each held connection, or code that callers chain to a future
   * (which may block).
   *
   * @param name names its threads {@code name-1}, {@code name-2}, ...
   */
  public static ExecutorService onDemand(String name) {
    return new ThreadPoolExecutor(
        0,
        Integer.MAX_VALUE,
        30,
        TimeUnit.SECONDS,
        new SynchronousQueue<>(),
        callThreads(name + "-"));
  }

  /**
   * One daemon timer thread named {@code name}. Its tasks must be short: blocking work goes to a
   * {@link #blockingCalls} executor. Cancelled tasks leave its queue at once.
   */
  public static ScheduledExecutorService timer(String name) {
    ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, daemon(name));
    timer.setRemoveOnCancelPolicy(true);
    return timer;
  }

  /**
   * Daemon platform threads named {@code name} (a thread that lives as long as its owner: a timer,
   * a listener loop).
   */
  public static ThreadFactory daemon(String name) {
    return runnable -> {
      Thread thread = new Thread(runnable, name);
      thread.setDaemon(true);
      return thread;
    };
  }

  /** Whether {@link #blockingCalls} runs its calls on virtual threads on this JDK. */
  public static boolean usesVirtualThreads() {
    return VIRTUAL;
  }

  /** Virtual threads where safe (see the class comment), else daemon platform threads. */
  private static ThreadFactory callThreads(String prefix) {
    ThreadFactory virtual = VIRTUAL ? virtualThreads(prefix) : null;
    if (virtual != null) {
      return virtual;
    }
    AtomicInteger ids = new AtomicInteger();
    return runnable -> {
      Thread thread = new Thread(runnable, prefix + ids.incrementAndGet());
      thread.setDaemon(true);
      return thread;
    };
  }

  /**
   * {@code Thread.ofVirtual().name(prefix, 1).factory()}, called reflectively so that the core
   * compiles for Java 17; null where the JDK has no virtual threads.
   */
  private static @Nullable ThreadFactory virtualThreads(String prefix) {
    try {
      Object builder = Thread.class.getMethod("ofVirtual").invoke(null);
      builder =
          Class.forName("java.lang.Thread$Builder$OfVirtual")
              .getMethod("name", String.class, long.class)
              .invoke(builder, prefix, 1L);
      return (ThreadFactory)
          Class.forName("java.lang.Thread$Builder").getMethod("factory").invoke(builder);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }
}
