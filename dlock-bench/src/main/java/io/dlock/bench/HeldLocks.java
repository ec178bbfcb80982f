package io.dlock.bench;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import io.dlock.redis.RedisLocks;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

/**
 * S4 (many locks held with automatic renewal), S5 (many waiters on one lock) and S6 (heap for
 * 100,000 held leases), for dlock and Redisson's watchdog, each on its own redis-server.
 */
final class HeldLocks {
  private static final int IN_FLIGHT = 500;
  private static final long REDISSON_THREAD = 7L;

  private HeldLocks() {}

  /** Heap used after full collections, in bytes. */
  static long usedHeap() throws InterruptedException {
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 4; i++) {
      System.gc();
      Thread.sleep(80);
      used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
    }
    return used;
  }

  // ---------------------------------------------------------------- holding many locks

  /** Something that can take and give back many locks at once. */
  interface Holder extends AutoCloseable {
    void acquireAll(String prefix, int n) throws Exception;

    void releaseAll() throws Exception;

    @Override
    void close();
  }

  static final class DlockHolder implements Holder {
    final LockClient client;
    private final LockOptions options;
    private final ConcurrentLinkedQueue<Lease> held = new ConcurrentLinkedQueue<>();

    DlockHolder(String uri, Duration lease) {
      client = RedisLocks.newClient(uri);
      options = LockOptions.defaults().withRenewedLease(lease);
    }

    @Override
    public void acquireAll(String prefix, int n) throws Exception {
      Semaphore slots = new Semaphore(IN_FLIGHT);
      AtomicReference<Throwable> failure = new AtomicReference<>();
      for (int i = 0; i < n; i++) {
        slots.acquire();
        client
            .lock(prefix + i, options)
            .acquireAsync(RedisLockers.WAIT)
            .whenComplete(
                (lease, error) -> {
                  if (lease != null) {
                    held.add(lease);
                  } else {
                    failure.compareAndSet(null, error);
                  }
                  slots.release();
                });
      }
      slots.acquire(IN_FLIGHT);
      slots.release(IN_FLIGHT);
      if (failure.get() != null) {
        throw new IllegalStateException("dlock acquisition failed", failure.get());
      }
    }

    @Override
    public void releaseAll() throws Exception {
      ExecutorService pool = Executors.newFixedThreadPool(16);
      List<Lease> leases = new ArrayList<>(held);
      held.clear();
      List<CompletableFuture<Void>> done = new ArrayList<>();
      int chunk = Math.max(1, leases.size() / 16 + 1);
      for (int i = 0; i < leases.size(); i += chunk) {
        List<Lease> part = leases.subList(i, Math.min(leases.size(), i + chunk));
        done.add(CompletableFuture.runAsync(() -> part.forEach(Lease::release), pool));
      }
      CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(5, TimeUnit.MINUTES);
      pool.shutdown();
    }

    @Override
    public void close() {
      client.close();
    }
  }

  static final class RedissonHolder implements Holder {
    final RedissonClient client;
    private final ConcurrentLinkedQueue<RLock> held = new ConcurrentLinkedQueue<>();

    RedissonHolder(String uri, Duration watchdogTimeout) {
      client = RedisLockers.RedissonLocker.create(uri, watchdogTimeout.toMillis());
    }

    @Override
    public void acquireAll(String prefix, int n) throws Exception {
      Semaphore slots = new Semaphore(IN_FLIGHT);
      AtomicReference<Throwable> failure = new AtomicReference<>();
      for (int i = 0; i < n; i++) {
        slots.acquire();
        RLock lock = client.getLock(prefix + i);
        lock.lockAsync(REDISSON_THREAD)
            .whenComplete(
                (ok, error) -> {
                  if (error == null) {
                    held.add(lock);
                  } else {
                    failure.compareAndSet(null, error);
                  }
                  slots.release();
                });
      }
      slots.acquire(IN_FLIGHT);
      slots.release(IN_FLIGHT);
      if (failure.get() != null) {
        throw new IllegalStateException("Redisson acquisition failed", failure.get());
      }
    }

    @Override
    public void releaseAll() throws Exception {
      Semaphore slots = new Semaphore(IN_FLIGHT);
      for (RLock lock : held) {
        slots.acquire();
        lock.unlockAsync(REDISSON_THREAD).whenComplete((ok, error) -> slots.release());
      }
      slots.acquire(IN_FLIGHT);
      held.clear();
    }

    @Override
    public void close() {
      client.shutdown(0, 2, TimeUnit.SECONDS);
    }
  }

  /** Heap per held lock: used heap before and after taking {@code n} locks, divided by n. */
  static double heapPerLock(Holder holder, String prefix, int n) throws Exception {
    long before = usedHeap();
    holder.acquireAll(prefix, n);
    long after = usedHeap();
    return (after - before) / (double) n;
  }

  // ---------------------------------------------------------------- S5: many waiters

  /** Server commands per hand-off with {@code waiters} queued on one lock in one client. */
  record HandoffCounts(double commandsPerHandoff, double requestsPerHandoff, String breakdown) {}

  static HandoffCounts dlockHandoffs(int waiters, int handoffs) throws Exception {
    try (RedisAdmin admin = RedisAdmin.startServer();
        LockClient client = RedisLocks.newClient(admin.uri())) {
      var lock = client.lock("s5");
      Lease holder = lock.acquireAsync(Duration.ZERO).get(10, TimeUnit.SECONDS);
      List<CompletableFuture<Lease>> queued = new ArrayList<>();
      for (int i = 0; i < waiters; i++) {
        queued.add(lock.acquireAsync(Duration.ofMinutes(5)));
      }
      quiesce(admin);
      ExecutorService releaser = Executors.newSingleThreadExecutor();
      CountDownLatch done = new CountDownLatch(1);
      AtomicInteger granted = new AtomicInteger();
      for (CompletableFuture<Lease> f : queued) {
        f.thenAccept(
            lease ->
                releaser.execute(
                    () -> {
                      if (granted.incrementAndGet() >= handoffs) {
                        done.countDown();
                      } else {
                        lease.release();
                      }
                    }));
      }
      admin.reset();
      RedisAdmin.Snapshot before = admin.snapshot();
      releaser.execute(holder::release);
      if (!done.await(2, TimeUnit.MINUTES)) {
        throw new IllegalStateException("dlock S5: only " + granted.get() + " hand-offs");
      }
      RedisAdmin.Snapshot after = admin.snapshot();
      releaser.shutdown();
      queued.forEach(f -> f.cancel(true));
      return counts(before, after, handoffs, c -> Locker.SCRIPT_AND_PUBSUB.contains(c));
    }
  }

  static HandoffCounts redissonHandoffs(int waiters, int handoffs) throws Exception {
    try (RedisAdmin admin = RedisAdmin.startServer()) {
      RedissonClient client = RedisLockers.RedissonLocker.create(admin.uri(), 30_000);
      try {
        RLock lock = client.getLock("s5");
        lock.lockAsync(1L).get(10, TimeUnit.SECONDS);
        ExecutorService releaser = Executors.newSingleThreadExecutor();
        CountDownLatch done = new CountDownLatch(1);
        AtomicInteger granted = new AtomicInteger();
        for (int i = 0; i < waiters; i++) {
          long threadId = 1000L + i;
          lock.lockAsync(threadId)
              .thenAccept(
                  ok ->
                      releaser.execute(
                          () -> {
                            if (granted.incrementAndGet() >= handoffs) {
                              done.countDown();
                            } else {
                              lock.unlockAsync(threadId);
                            }
                          }));
        }
        quiesce(admin);
        admin.reset();
        RedisAdmin.Snapshot before = admin.snapshot();
        releaser.execute(() -> lock.unlockAsync(1L));
        if (!done.await(2, TimeUnit.MINUTES)) {
          throw new IllegalStateException("Redisson S5: only " + granted.get() + " hand-offs");
        }
        RedisAdmin.Snapshot after = admin.snapshot();
        releaser.shutdown();
        return counts(before, after, handoffs, c -> Locker.SCRIPT_AND_PUBSUB.contains(c));
      } finally {
        client.shutdown(0, 2, TimeUnit.SECONDS);
      }
    }
  }

  private static HandoffCounts counts(
      RedisAdmin.Snapshot before,
      RedisAdmin.Snapshot after,
      int handoffs,
      java.util.function.Predicate<String> isRequest) {
    return new HandoffCounts(
        (after.totalCalls() - before.totalCalls()) / (double) handoffs,
        (after.requestsOf(isRequest) - before.requestsOf(isRequest)) / (double) handoffs,
        after.breakdown(handoffs));
  }

  /** Waits until the server sees no more commands (every waiter queued and subscribed). */
  private static void quiesce(RedisAdmin admin) throws InterruptedException {
    long last = -1;
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    while (System.nanoTime() < deadline) {
      Thread.sleep(250);
      long now = admin.snapshot().totalCalls();
      if (now == last) {
        return;
      }
      last = now;
    }
  }
}
