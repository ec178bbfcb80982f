package io.dlock.jdbc;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The releases of grant owners asked for and not yet answered, per name and owner. The core may ask
 * again with the same grant owner while the release of its earlier grant is in flight (it undid a
 * grant whose request saw its session lost, and retries): answered as a repeated request, the retry
 * would be handed the grant that the pending release then deletes. So it is told the name is held
 * until the release is answered. Counted: two releases of one grant can be in flight at once (a
 * holder's release racing the client's close), and the guard lasts until the last.
 */
final class PendingReleases {
  /** How soon an acquisition turned away by a pending release tries again. */
  static final Duration RETRY = Duration.ofMillis(20);

  private final ConcurrentHashMap<String, Integer> pending = new ConcurrentHashMap<>();

  private static String key(String name, String owner) {
    return name + '\u0000' + owner;
  }

  /** Whether a release of {@code owner}'s grant of {@code name} is in flight. */
  boolean pending(String name, String owner) {
    return pending.containsKey(key(name, owner));
  }

  /** Runs {@code release}, counted as pending until its answer. */
  <T> CompletableFuture<T> track(
      String name, String owner, Supplier<CompletableFuture<T>> release) {
    String key = key(name, owner);
    pending.merge(key, 1, Integer::sum);
    CompletableFuture<T> released;
    try {
      released = release.get();
    } catch (RuntimeException e) {
      done(key);
      throw e;
    }
    released.whenComplete((result, failure) -> done(key));
    return released;
  }

  private void done(String key) {
    pending.computeIfPresent(key, (k, n) -> n > 1 ? n - 1 : null);
  }
}
