package io.dlock.bench;

import io.dlock.DistributedLock;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import io.dlock.redis.RedisLocks;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/** The Redis contenders: the physical limit, dlock, Redisson with a lease and with its watchdog. */
final class RedisLockers {
  static final Duration WAIT = Duration.ofMinutes(1);
  static final long LEASE_MS = 30_000;

  private RedisLockers() {}

  /**
   * The minimal safe Redis lock by hand: {@code SET key token NX PX}, then a compare-and-delete
   * script by SHA. Two round trips, four commands. It cannot wait (no wake-up): it retries.
   */
  static final class Limit implements Locker {
    static final String COMPARE_AND_DELETE =
        "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end"
            + " return 0";
    private final RedisClient[] clients;
    private final StatefulRedisConnection<String, String>[] connections;
    private final RedisCommands<String, String>[] redis;
    private final String sha;
    private final SetArgs nxPx = SetArgs.Builder.nx().px(LEASE_MS);

    Limit(String uri) {
      this(uri, 1);
    }

    /**
     * With {@code clientCount} clients of one connection each (each with its own I/O threads, as
     * separate processes have), shared by the threads as dlock's clients are.
     */
    @SuppressWarnings("unchecked")
    Limit(String uri, int clientCount) {
      clients = new RedisClient[clientCount];
      connections = new StatefulRedisConnection[clientCount];
      redis = new RedisCommands[clientCount];
      for (int i = 0; i < clientCount; i++) {
        clients[i] = RedisClient.create(uri);
        connections[i] = clients[i].connect();
        redis[i] = connections[i].sync();
      }
      sha = redis[0].scriptLoad(COMPARE_AND_DELETE);
    }

    @Override
    public String name() {
      return "limit (SET NX PX + CAD)";
    }

    @Override
    public Held acquire(int thread, String key) throws InterruptedException {
      RedisCommands<String, String> on = redis[thread % redis.length];
      ThreadLocalRandom random = ThreadLocalRandom.current();
      String token = Long.toHexString(random.nextLong()) + Long.toHexString(random.nextLong());
      while (!"OK".equals(on.set(key, token, nxPx))) {
        Thread.sleep(1); // not used by the scenarios that measure it: it never waits there
      }
      String[] keys = {key};
      return () -> on.<Long>evalsha(sha, ScriptOutputType.INTEGER, keys, token);
    }

    @Override
    public boolean isRequest(String command) {
      return command.equals("set") || Locker.super.isRequest(command);
    }

    @Override
    public void close() {
      for (int i = 0; i < clients.length; i++) {
        connections[i].close();
        clients[i].shutdown(0, 2, TimeUnit.SECONDS);
      }
    }
  }

  /** dlock's Redis backend, through the public API, default options (a 30 s renewed lease). */
  static final class Dlock implements Locker {
    private final LockClient[] clients;
    private final LockOptions options;

    Dlock(String uri, int clientCount) {
      this(uri, clientCount, LockOptions.defaults());
    }

    Dlock(String uri, int clientCount, LockOptions options) {
      clients = new LockClient[clientCount];
      for (int i = 0; i < clientCount; i++) {
        clients[i] = RedisLocks.newClient(uri);
      }
      this.options = options;
    }

    @Override
    public String name() {
      return "dlock";
    }

    @Override
    public Held acquire(int thread, String key) {
      DistributedLock lock = clients[thread % clients.length].lock(key, options);
      Lease lease = lock.acquire(WAIT);
      return lease::release;
    }

    @Override
    public void close() {
      for (LockClient client : clients) {
        client.close();
      }
    }
  }

  /** Redisson's {@link RLock}: with a 30 s lease ({@code lock(30, SECONDS)}) or its watchdog. */
  static final class RedissonLocker implements Locker {
    private final RedissonClient[] clients;
    private final boolean watchdog;

    RedissonLocker(String uri, int clientCount, boolean watchdog) {
      clients = new RedissonClient[clientCount];
      for (int i = 0; i < clientCount; i++) {
        clients[i] = create(uri, LEASE_MS);
      }
      this.watchdog = watchdog;
    }

    static RedissonClient create(String uri, long watchdogTimeoutMs) {
      Config config = new Config();
      config.setLockWatchdogTimeout(watchdogTimeoutMs);
      config.useSingleServer().setAddress(uri);
      return Redisson.create(config);
    }

    @Override
    public String name() {
      return watchdog ? "Redisson RLock (watchdog)" : "Redisson RLock (30 s lease)";
    }

    @Override
    public Held acquire(int thread, String key) {
      RLock lock = clients[thread % clients.length].getLock(key);
      if (watchdog) {
        lock.lock();
      } else {
        lock.lock(LEASE_MS, TimeUnit.MILLISECONDS);
      }
      return lock::unlock;
    }

    @Override
    public void close() {
      for (RedissonClient client : clients) {
        client.shutdown(0, 2, TimeUnit.SECONDS);
      }
    }
  }

  static Set<String> adminCommands() {
    return Set.of("info", "config|resetstat", "config|get", "config|set", "hello", "select");
  }
}
