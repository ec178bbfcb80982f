package io.dlock;

/**
 * What a client's backend can do beyond mutual exclusion, leases, renewal and fencing (which every
 * backend has): {@link LockClient#capabilities()}.
 */
public enum BackendCapability {
  /**
   * Waiters are woken by the backend when a lock is released (pub/sub, watches, LISTEN); without
   * it, waiters retry with capped exponential backoff and at the holder's lease end.
   */
  RELEASE_SIGNALS,
  /** Waiters queue on the server in arrival order (ZooKeeper), each woken in its turn. */
  WAIT_QUEUE,
  /**
   * Holds live in a session or connection (ZooKeeper, database session and row locks): a lost
   * session loses them, and the holder is told ({@code SESSION_LOST}).
   */
  SESSION_BOUND_HOLDS,
  /** {@link LockClient#inspect(String)} and {@link LockClient#forceRelease(String)} work. */
  ADMINISTRATION,
  /**
   * Holds of one owner id ({@link LockOptions#withOwnerId}) made through different clients, and so
   * different processes, share one grant; without it, an owner id re-enters only within its client.
   */
  OWNER_IDS_ACROSS_CLIENTS,
  /**
   * {@link LockClient#semaphore(String, int)} works: the backend keeps leased semaphores ({@link
   * io.dlock.spi.PermitStore}).
   */
  SEMAPHORES
}
