package io.dlock.spi;

import java.util.concurrent.CompletableFuture;

/**
 * An optional ability: the backend tells waiters when a lock is released (Redis pub/sub, ZooKeeper
 * watches, PostgreSQL LISTEN). Without it, the core retries waiting acquisitions with capped
 * exponential backoff and jitter, and at the holder's lease end.
 *
 * <p>Both methods must not block: the core may call them while it holds a short internal lock.
 */
public interface ReleaseSignals {

  /**
   * Starts delivering release signals of {@code lockName} to {@code listener}. The future completes
   * once no release can be missed any more (for Redis, once the subscription is confirmed). At most
   * one listener per name is registered at a time; the core calls {@link #unwatchReleases(String)}
   * before it registers another.
   */
  CompletableFuture<Void> watchReleases(String lockName, ReleaseListener listener);

  /** Stops the release signals of {@code lockName}. */
  void unwatchReleases(String lockName);
}
