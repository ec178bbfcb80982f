package io.dlock.core;

import io.dlock.spi.AcquireResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LockAdministration;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockOwner;
import io.dlock.spi.PermitStore;
import io.dlock.spi.ReleaseListener;
import io.dlock.spi.ReleaseResult;
import io.dlock.spi.ReleaseSignals;
import io.dlock.spi.SessionBoundHolds;
import io.dlock.spi.WaitQueue;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * The backend as the core sees it once it has semaphores: calls for a {@link PermitGrantName} go to
 * the backend's {@link PermitStore}, every other call to the backend as is. This is what lets the
 * core's acquisition, waiting, renewal and loss handling serve permits without a line of their own.
 *
 * <p>Release signals are per semaphore on the backend, but per grant name here (one name per bound
 * and count): the grant names of one semaphore share one watch of the store's.
 */
final class PermitRouting implements LockBackend {
  private final LockBackend backend;
  private final PermitStore store;
  private final @Nullable ReleaseSignals signals;
  private final @Nullable WaitQueue waitQueue;

  private PermitRouting(LockBackend backend, PermitStore store) {
    this.backend = backend;
    this.store = store;
    ReleaseSignals lockSignals = backend.releaseSignals().orElse(null);
    this.signals = lockSignals == null ? null : new Signals(lockSignals);
    WaitQueue lockQueue = backend.waitQueue().orElse(null);
    this.waitQueue =
        lockQueue == null
            ? null
            : (name, owner) -> {
              PermitGrantName permit = PermitGrantName.parse(name);
              return permit == null
                  ? lockQueue.abandon(name, owner)
                  : store.abandon(permit.semaphore(), owner);
            };
  }

  /** The backend, routing permit grants to its permit store if it has one. */
  static LockBackend wrap(LockBackend backend) {
    Optional<PermitStore> store = backend.permits();
    return store.isPresent() ? new PermitRouting(backend, store.get()) : backend;
  }

  @Override
  public String name() {
    return backend.name();
  }

  @Override
  public void start(BackendContext context) {
    backend.start(context);
  }

  @Override
  public CompletableFuture<AcquireResult> tryAcquire(
      String lockName, LockOwner owner, Duration lease) {
    PermitGrantName permit = PermitGrantName.parse(lockName);
    return permit == null
        ? backend.tryAcquire(lockName, owner, lease)
        : store.tryAcquire(permit.semaphore(), permit.permits(), permit.count(), owner, lease);
  }

  @Override
  public CompletableFuture<ReleaseResult> release(
      String lockName, LockOwner owner, long fencingToken) {
    PermitGrantName permit = PermitGrantName.parse(lockName);
    return permit == null
        ? backend.release(lockName, owner, fencingToken)
        : store.release(permit.semaphore(), owner, fencingToken);
  }

  @Override
  public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
    List<HeldLease> locks = new ArrayList<>(leases.size());
    // The store sees each permit lease under its semaphore's name; its answer maps back.
    Map<HeldLease, HeldLease> permits = new LinkedHashMap<>();
    for (HeldLease lease : leases) {
      PermitGrantName permit = PermitGrantName.parse(lease.lockName());
      if (permit == null) {
        locks.add(lease);
      } else {
        permits.put(
            new HeldLease(permit.semaphore(), lease.owner(), lease.fencingToken(), lease.lease()),
            lease);
      }
    }
    if (permits.isEmpty()) {
      return backend.renew(locks);
    }
    CompletableFuture<Set<HeldLease>> permitsGone =
        store
            .renew(List.copyOf(permits.keySet()))
            .thenApply(
                gone -> {
                  Set<HeldLease> named = new HashSet<>();
                  for (HeldLease lease : gone) {
                    HeldLease original = permits.get(lease);
                    if (original != null) {
                      named.add(original);
                    }
                  }
                  return named;
                });
    if (locks.isEmpty()) {
      return permitsGone;
    }
    return backend
        .renew(locks)
        .thenCombine(
            permitsGone,
            (a, b) -> {
              Set<HeldLease> all = new HashSet<>(a);
              all.addAll(b);
              return all;
            });
  }

  @Override
  public Optional<ReleaseSignals> releaseSignals() {
    return Optional.ofNullable(signals);
  }

  @Override
  public Optional<WaitQueue> waitQueue() {
    return Optional.ofNullable(waitQueue);
  }

  @Override
  public Optional<SessionBoundHolds> sessionBoundHolds() {
    return backend.sessionBoundHolds();
  }

  @Override
  public Optional<PermitStore> permits() {
    return Optional.of(store);
  }

  @Override
  public Optional<LockAdministration> administration() {
    return backend.administration();
  }

  @Override
  public boolean sharesOwnerIdsAcrossClients() {
    return backend.sharesOwnerIdsAcrossClients();
  }

  @Override
  public void close() {
    backend.close();
  }

  /** Lock names to the backend's signals; grant names of one semaphore to one store watch. */
  private final class Signals implements ReleaseSignals {
    private final ReleaseSignals lockSignals;
    private final ReentrantLock lock = new ReentrantLock();
    // Per semaphore: the watch and the listener of each grant name watching it.
    private final Map<String, Watch> watches = new HashMap<>();

    Signals(ReleaseSignals lockSignals) {
      this.lockSignals = lockSignals;
    }

    @Override
    public CompletableFuture<Void> watchReleases(String lockName, ReleaseListener listener) {
      PermitGrantName permit = PermitGrantName.parse(lockName);
      if (permit == null) {
        return lockSignals.watchReleases(lockName, listener);
      }
      String semaphore = permit.semaphore();
      lock.lock();
      try {
        Watch watch = watches.get(semaphore);
        if (watch == null || watch.started.isCompletedExceptionally()) {
          if (watch != null) {
            store.unwatchReleases(semaphore); // a failed watch is started again, as for locks
          }
          Watch fresh = new Watch(watch == null ? new LinkedHashMap<>() : watch.listeners);
          CompletableFuture<Void> started = store.watchReleases(semaphore, fresh::released);
          fresh.started =
              started != null
                  ? started
                  : CompletableFuture.failedFuture(
                      new IllegalStateException(
                          "The "
                              + backend.name()
                              + " backend signals lock releases but not permit releases"));
          watches.put(semaphore, fresh);
          watch = fresh;
        }
        watch.listeners.put(lockName, listener);
        return watch.started;
      } finally {
        lock.unlock();
      }
    }

    @Override
    public void unwatchReleases(String lockName) {
      PermitGrantName permit = PermitGrantName.parse(lockName);
      if (permit == null) {
        lockSignals.unwatchReleases(lockName);
        return;
      }
      lock.lock();
      try {
        Watch watch = watches.get(permit.semaphore());
        if (watch != null) {
          watch.listeners.remove(lockName);
          if (watch.listeners.isEmpty()) {
            watches.remove(permit.semaphore());
            store.unwatchReleases(permit.semaphore());
          }
        }
      } finally {
        lock.unlock();
      }
    }

    /** One store watch of a semaphore; guarded by the enclosing lock. */
    private final class Watch {
      final Map<String, ReleaseListener> listeners;
      CompletableFuture<Void> started = CompletableFuture.completedFuture(null);

      Watch(Map<String, ReleaseListener> listeners) {
        this.listeners = listeners;
      }

      /** Every grant name's waiters may try: the freed permits may fit any of their counts. */
      void released(@Nullable String waiterOwnerKey) {
        List<ReleaseListener> all;
        lock.lock();
        try {
          all = List.copyOf(listeners.values());
        } finally {
          lock.unlock();
        }
        for (ReleaseListener listener : all) {
          listener.released(waiterOwnerKey);
        }
      }
    }
  }
}
