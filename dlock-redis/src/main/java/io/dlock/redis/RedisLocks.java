package io.dlock.redis;

import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;

/**
 * Creates lock clients on Redis.
 *
 * <pre>{@code
 * try (LockClient locks = RedisLocks.newClient("redis://localhost:6379")) {
 *   try (Lease lease = locks.lock("orders:42").acquire(Duration.ofSeconds(5))) {
 *     store.write(order, lease.fencingToken());
 *   }
 * }
 * }</pre>
 */
public final class RedisLocks {
  private RedisLocks() {}

  /**
   * A client for the Redis server at {@code uri} ({@code redis://} or {@code rediss://}), with
   * default settings.
   *
   * @throws io.dlock.BackendUnavailableException if the server cannot be reached
   */
  public static LockClient newClient(String uri) {
    return newClient(RedisLockSettings.of(uri), LockClientOptions.defaults());
  }

  /** A client with these Redis settings and client options. */
  public static LockClient newClient(RedisLockSettings settings, LockClientOptions options) {
    return LockClients.create(RedisLockBackend.connect(settings), options);
  }
}
