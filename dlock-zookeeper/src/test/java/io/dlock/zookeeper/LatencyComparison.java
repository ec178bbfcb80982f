package io.dlock.zookeeper;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;
import org.apache.curator.test.TestingServer;

/**
 * Measures dlock on ZooKeeper next to Curator's {@link InterProcessMutex}, interleaved in rounds on
 * the same in-JVM server in the same run, and prints the numbers. A benchmark, not a test: it
 * asserts nothing and is not run by the build. Run it with:
 *
 * <pre>{@code
 * ./mvnw -B -q -pl dlock-zookeeper test-compile exec:java \
 *   -Dexec.mainClass=io.dlock.zookeeper.LatencyComparison -Dexec.classpathScope=test
 * }</pre>
 *
 * <p>Two figures per implementation: one thread's uncontended acquire + release, and the hand-off
 * under contention (from the holder calling release to the queued waiter in another client
 * returning from acquire).
 */
public final class LatencyComparison {
  private static final int ROUNDS = 10;
  private static final int SOLO_PER_ROUND = 200;
  private static final int HANDOFF_PER_ROUND = 50;

  private LatencyComparison() {}

  /** A lock both implementations offer, driven the same way. */
  private interface Mutex {
    void acquire() throws Exception;

    void release() throws Exception;
  }

  public static void main(String[] args) throws Exception {
    System.setProperty("zookeeper.admin.enableServer", "false");
    try (TestingServer server = new TestingServer(true)) {
      String connect = server.getConnectString();
      ZooKeeperLockSettings settings =
          ZooKeeperLockSettings.of(connect).withRootPath("/bench-dlock");
      try (LockClient dlockA = ZooKeeperLocks.newClient(settings, LockClientOptions.defaults());
          LockClient dlockB = ZooKeeperLocks.newClient(settings, LockClientOptions.defaults());
          CuratorFramework curatorA = curator(connect);
          CuratorFramework curatorB = curator(connect);
          CuratorFramework observer = curator(connect)) {
        LockOptions options = LockOptions.defaults();
        String dlockParent = new LockPaths("/bench-dlock").lockPath("bench");
        String curatorPath = "/bench-curator/bench";
        Mutex dA = dlock(dlockA, options);
        Mutex dB = dlock(dlockB, options);
        Mutex cA = curatorMutex(curatorA, curatorPath);
        Mutex cB = curatorMutex(curatorB, curatorPath);

        // Warm-up of both, not counted.
        solo(dA, 300);
        solo(cA, 300);
        handOff(dA, dB, observer, dlockParent, 30);
        handOff(cA, cB, observer, curatorPath, 30);

        List<Long> soloD = new ArrayList<>();
        List<Long> soloC = new ArrayList<>();
        List<Long> handD = new ArrayList<>();
        List<Long> handC = new ArrayList<>();
        for (int round = 0; round < ROUNDS; round++) {
          // Alternate which goes first, so drift in the machine's load hits both alike.
          if (round % 2 == 0) {
            soloD.addAll(solo(dA, SOLO_PER_ROUND));
            soloC.addAll(solo(cA, SOLO_PER_ROUND));
            handD.addAll(handOff(dA, dB, observer, dlockParent, HANDOFF_PER_ROUND));
            handC.addAll(handOff(cA, cB, observer, curatorPath, HANDOFF_PER_ROUND));
          } else {
            soloC.addAll(solo(cA, SOLO_PER_ROUND));
            soloD.addAll(solo(dA, SOLO_PER_ROUND));
            handC.addAll(handOff(cA, cB, observer, curatorPath, HANDOFF_PER_ROUND));
            handD.addAll(handOff(dA, dB, observer, dlockParent, HANDOFF_PER_ROUND));
          }
        }
        System.out.printf(
            Locale.ROOT,
            "ZooKeeper %s, one in-JVM TestingServer, %d rounds interleaved, forceSync=%s%n",
            org.apache.zookeeper.Version.getFullVersion(),
            ROUNDS,
            System.getProperty("zookeeper.forceSync", "yes"));
        System.out.printf(
            Locale.ROOT, "%-44s %8s %8s %8s %8s%n", "measure (ms)", "n", "mean", "p50", "p99");
        print("dlock        single-thread acquire+release", soloD);
        print("Curator IPM  single-thread acquire+release", soloC);
        print("dlock        hand-off under contention", handD);
        print("Curator IPM  hand-off under contention", handC);
      }
    }
  }

  private static CuratorFramework curator(String connect) throws InterruptedException {
    CuratorFramework client =
        CuratorFrameworkFactory.newClient(
            connect, 30_000, 5_000, new BoundedExponentialBackoffRetry(50, 1000, 3));
    client.start();
    if (!client.blockUntilConnected(10, TimeUnit.SECONDS)) {
      throw new IllegalStateException("No connection to " + connect);
    }
    return client;
  }

  private static Mutex dlock(LockClient client, LockOptions options) {
    Lease[] held = new Lease[1];
    return new Mutex() {
      @Override
      public void acquire() {
        held[0] = client.lock("bench", options).acquire(Duration.ofSeconds(30));
      }

      @Override
      public void release() {
        held[0].release();
      }
    };
  }

  private static Mutex curatorMutex(CuratorFramework client, String path) {
    InterProcessMutex mutex = new InterProcessMutex(client, path);
    return new Mutex() {
      @Override
      public void acquire() throws Exception {
        if (!mutex.acquire(30, TimeUnit.SECONDS)) {
          throw new IllegalStateException("InterProcessMutex not acquired within 30 s");
        }
      }

      @Override
      public void release() throws Exception {
        mutex.release();
      }
    };
  }

  private static List<Long> solo(Mutex mutex, int n) throws Exception {
    List<Long> nanos = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      long start = System.nanoTime();
      mutex.acquire();
      mutex.release();
      nanos.add(System.nanoTime() - start);
    }
    return nanos;
  }

  /**
   * The holder (this thread, client A) holds; a waiter thread of client B queues; once the waiter's
   * node is visible, the holder releases and the time until the waiter returns from acquire counts.
   */
  private static List<Long> handOff(
      Mutex holder, Mutex waiter, CuratorFramework observer, String parent, int n)
      throws Exception {
    List<Long> nanos = new ArrayList<>(n);
    ExecutorService waiterThread = Executors.newSingleThreadExecutor();
    try {
      for (int i = 0; i < n; i++) {
        holder.acquire();
        CompletableFuture<Long> acquiredAt =
            CompletableFuture.supplyAsync(
                () -> {
                  try {
                    waiter.acquire();
                    long at = System.nanoTime();
                    waiter.release();
                    return at;
                  } catch (Exception e) {
                    throw new IllegalStateException(e);
                  }
                },
                waiterThread);
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (observer.getChildren().forPath(parent).size() < 2) {
          if (System.nanoTime() > until) {
            throw new IllegalStateException("The waiter never queued");
          }
          LockSupport.parkNanos(200_000); // polling the queue, before the clock starts
        }
        long released = System.nanoTime();
        holder.release();
        nanos.add(acquiredAt.get(30, TimeUnit.SECONDS) - released);
      }
    } finally {
      waiterThread.shutdownNow();
    }
    return nanos;
  }

  private static void print(String label, List<Long> nanos) {
    List<Long> sorted = new ArrayList<>(nanos);
    Collections.sort(sorted);
    double mean = sorted.stream().mapToLong(Long::longValue).average().orElse(0) / 1e6;
    double p50 = sorted.get(sorted.size() / 2) / 1e6;
    double p99 = sorted.get(Math.min(sorted.size() - 1, (int) (sorted.size() * 0.99))) / 1e6;
    System.out.printf(
        Locale.ROOT, "%-44s %8d %8.3f %8.3f %8.3f%n", label, sorted.size(), mean, p50, p99);
  }
}
