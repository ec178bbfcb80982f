package io.dlock.jdbc;

import io.dlock.MonotonicClock;
import io.dlock.PermitInfo;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.HeldLease;
import io.dlock.spi.HolderDescription;
import io.dlock.spi.LockOwner;
import io.dlock.spi.PermitStore;
import io.dlock.spi.ReleaseListener;
import io.dlock.spi.ReleaseResult;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Leased semaphores in {@link JdbcLockMode#LEASE_ROW} mode: each primitive runs on a pooled
 * connection on the backend's call executor, as the lease-row locks do ({@link JdbcCalls}: bounded
 * by the statement timeout, failures as {@link io.dlock.BackendUnavailableException}); an
 * acquisition is one transaction, the others one statement or one batch ({@link PermitStatements}).
 * On PostgreSQL releases are signalled on the lock table's {@code NOTIFY} channel, one payload per
 * semaphore ({@link PostgresPermitStatements#payload}); elsewhere the core backs off and retries.
 */
final class LeaseRowPermits implements PermitStore {
  private static final int RENEW_BATCH = 500;
  private volatile MonotonicClock clock = MonotonicClock.SYSTEM;
  // Owner keys are ASCII, where String order is byte order (PostgreSQL's COLLATE "C").
  private static final Comparator<HeldLease> LOCK_ORDER =
      Comparator.comparing(HeldLease::lockName).thenComparing(lease -> lease.owner().key());

  private final PermitStatements statements;
  private final PermitAcquisition acquisition;
  private final JdbcCalls calls;
  private final @Nullable PostgresReleaseSignals signals;
  private final Map<String, ReleaseListener> listeners = new ConcurrentHashMap<>();
  private final PendingReleases pendingReleases = new PendingReleases();

  LeaseRowPermits(
      PermitStatements statements, JdbcCalls calls, @Nullable PostgresReleaseSignals signals) {
    this.statements = statements;
    this.acquisition = new PermitAcquisition(statements, () -> clock.nanoTime());
    this.calls = calls;
    this.signals = signals;
  }

  /** The client's clock ({@code LockBackend.start}), on which the core counts a grant's lease. */
  void useClock(MonotonicClock clock) {
    this.clock = clock;
  }

  @Override
  public CompletableFuture<AcquireResult> tryAcquire(
      String semaphore, int permits, int count, LockOwner owner, Duration lease) {
    // On the caller's thread: the holder is the thread that acquires, not the executor's.
    String holder = HolderDescription.of(owner);
    String key = owner.key();
    long calledAt = clock.nanoTime(); // the core counts the lease from about now
    if (pendingReleases.pending(semaphore, key)) {
      // As for a lock (see PendingReleases): the repeat would be handed the grant being released.
      return CompletableFuture.completedFuture(new AcquireResult.Held(PendingReleases.RETRY));
    }
    return calls
        .call(
            "acquire " + count + " of " + permits + " permits of semaphore '" + semaphore + "'",
            c ->
                acquisition.acquire(
                    c, semaphore, permits, count, key, holder, lease.toMillis(), calledAt))
        .exceptionallyCompose(
            failure -> GrantToUndo.undoElsewhere(calls, "semaphore " + semaphore, failure));
  }

  @Override
  public CompletableFuture<ReleaseResult> release(
      String semaphore, LockOwner owner, long fencingToken) {
    String key = owner.key();
    return pendingReleases.track(
        semaphore,
        key,
        () ->
            calls.call(
                "release permits of semaphore '" + semaphore + "'",
                c -> statements.release(c, semaphore, key, fencingToken)));
  }

  @Override
  public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
    if (leases.isEmpty()) {
      return CompletableFuture.completedFuture(Set.of());
    }
    // In the order the acquisitions lock a semaphore's grants (see
    // PostgresPermitStatements#liveGrants): a batch run as one transaction never waits for an
    // acquisition that waits for it.
    List<HeldLease> ordered = leases.stream().sorted(LOCK_ORDER).toList();
    return calls.call(
        "renew " + leases.size() + " permit lease(s)",
        c -> {
          Set<HeldLease> gone = new HashSet<>();
          for (int from = 0; from < ordered.size(); from += RENEW_BATCH) {
            List<HeldLease> batch =
                ordered.subList(from, Math.min(ordered.size(), from + RENEW_BATCH));
            for (int position : statements.renew(c, batch)) {
              gone.add(batch.get(position));
            }
          }
          return gone;
        });
  }

  /** PostgreSQL's NOTIFY, exactly where the locks have it; null elsewhere (the core backs off). */
  @Override
  public @Nullable CompletableFuture<Void> watchReleases(
      String semaphore, ReleaseListener listener) {
    if (signals == null) {
      return null;
    }
    listeners.put(semaphore, listener);
    return signals.ready();
  }

  @Override
  public void unwatchReleases(String semaphore) {
    listeners.remove(semaphore);
  }

  /** The listener of the semaphore a NOTIFY payload names; null if none, or a lock's payload. */
  @Nullable ReleaseListener listenerOf(String payload) {
    String semaphore = PostgresPermitStatements.semaphoreOf(payload);
    return semaphore == null ? null : listeners.get(semaphore);
  }

  /** Wakes every watcher: the signals were interrupted, and a release may have been missed. */
  void wakeAll() {
    for (ReleaseListener listener : listeners.values()) {
      listener.released(null);
    }
  }

  @Override
  public CompletableFuture<List<PermitInfo>> holders(String semaphore) {
    return calls.call(
        "list the holders of semaphore '" + semaphore + "'", c -> statements.holders(c, semaphore));
  }

  @Override
  public CompletableFuture<Optional<PermitInfo>> forceRelease(String semaphore, long fencingToken) {
    return calls.call(
        "force the release of grant " + fencingToken + " of semaphore '" + semaphore + "'",
        c -> statements.forceRelease(c, semaphore, fencingToken));
  }
}
