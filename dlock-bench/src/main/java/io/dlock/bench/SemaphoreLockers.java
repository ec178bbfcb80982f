package io.dlock.bench;

import io.dlock.LockClient;
import io.dlock.Permit;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RSemaphore;
import org.redisson.api.RedissonClient;

/**
 * The semaphore contenders of the permit throughput, as {@link Locker}s so that the lock
 * benchmark's harness ({@link Scenarios}) drives them: "acquiring a key" takes one permit of the
 * semaphore of that name (after a prefix of the run's own, so that runs never meet), with a bound
 * of a few permits, and "releasing" gives it back. Each contender is one client shared by every
 * thread, as one process's threads share theirs.
 */
final class SemaphoreLockers {
  private SemaphoreLockers() {}

  /** dlock's {@link io.dlock.LeasedSemaphore} on any backend, default options (30 s lease). */
  static final class Dlock implements Locker {
    private final String name;
    private final LockClient client;
    private final String prefix;
    private final int permits;

    Dlock(String name, LockClient client, String prefix, int permits) {
      this.name = name;
      this.client = client;
      this.prefix = prefix;
      this.permits = permits;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public Held acquire(int thread, String key) {
      Permit permit = client.semaphore(prefix + key, permits).acquire(RedisLockers.WAIT);
      return permit::release;
    }

    @Override
    public void close() {
      client.close();
    }
  }

  /**
   * Redisson's {@link RSemaphore}: a counter of free permits, no lease (a dead holder's permits
   * never come back by themselves).
   */
  static final class Redisson implements Locker {
    private final RedissonClient client;
    private final String prefix;
    private final int permits;
    private final Map<String, RSemaphore> semaphores = new ConcurrentHashMap<>();

    Redisson(RedissonClient client, String prefix, int permits) {
      this.client = client;
      this.prefix = prefix;
      this.permits = permits;
    }

    @Override
    public String name() {
      return "Redisson RSemaphore";
    }

    @Override
    public Held acquire(int thread, String key) throws InterruptedException {
      RSemaphore semaphore =
          semaphores.computeIfAbsent(
              key,
              k -> {
                RSemaphore s = client.getSemaphore("redisson-semaphore-" + prefix + k);
                s.trySetPermits(permits); // only the first call sets them
                return s;
              });
      if (!semaphore.tryAcquire(RedisLockers.WAIT)) {
        throw new IllegalStateException("RSemaphore: no permit within " + RedisLockers.WAIT);
      }
      return semaphore::release;
    }

    @Override
    public void close() {
      client.shutdown(0, 2, TimeUnit.SECONDS);
    }
  }

  /**
   * Redisson's {@link RPermitExpirableSemaphore}: each permit an id with a lease of its own, not
   * renewed (a live holder past its lease loses it unasked).
   */
  static final class RedissonExpirable implements Locker {
    private final RedissonClient client;
    private final String prefix;
    private final int permits;
    private final Duration lease;
    private final Map<String, RPermitExpirableSemaphore> semaphores = new ConcurrentHashMap<>();

    RedissonExpirable(RedissonClient client, String prefix, int permits, Duration lease) {
      this.client = client;
      this.prefix = prefix;
      this.permits = permits;
      this.lease = lease;
    }

    @Override
    public String name() {
      return "Redisson RPermitExpirableSemaphore";
    }

    @Override
    public Held acquire(int thread, String key) throws InterruptedException {
      RPermitExpirableSemaphore semaphore =
          semaphores.computeIfAbsent(
              key,
              k -> {
                RPermitExpirableSemaphore s =
                    client.getPermitExpirableSemaphore("redisson-expirable-" + prefix + k);
                s.trySetPermits(permits);
                return s;
              });
      String id =
          semaphore.tryAcquire(
              RedisLockers.WAIT.toMillis(), lease.toMillis(), TimeUnit.MILLISECONDS);
      if (id == null) {
        throw new IllegalStateException(name() + ": no permit within " + RedisLockers.WAIT);
      }
      return () -> semaphore.release(id);
    }

    @Override
    public void close() {
      client.shutdown(0, 2, TimeUnit.SECONDS);
    }
  }

  /**
   * Curator's {@link InterProcessSemaphoreV2}: a lease is an ephemeral node, so a dead holder's
   * permits come back when its session expires. One recipe per thread and name, all on one client.
   */
  static final class Curator implements Locker {
    private final CuratorFramework client;
    private final String prefix;
    private final int permits;
    private final Map<String, InterProcessSemaphoreV2> semaphores = new ConcurrentHashMap<>();

    Curator(CuratorFramework client, String prefix, int permits) {
      this.client = client;
      this.prefix = prefix;
      this.permits = permits;
    }

    @Override
    public String name() {
      return "Curator InterProcessSemaphoreV2";
    }

    @Override
    public Held acquire(int thread, String key) throws Exception {
      InterProcessSemaphoreV2 semaphore =
          semaphores.computeIfAbsent(
              thread + "/" + key,
              k ->
                  new InterProcessSemaphoreV2(client, "/bench-semaphore/" + prefix + key, permits));
      Lease lease = semaphore.acquire(RedisLockers.WAIT.toMillis(), TimeUnit.MILLISECONDS);
      if (lease == null) {
        throw new IllegalStateException(name() + ": no permit within " + RedisLockers.WAIT);
      }
      return lease::close;
    }

    @Override
    public void close() {
      client.close();
    }
  }
}
