package io.dlock.testkit;

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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The semaphores of an {@link InMemoryLockBackend}, with lease expiry judged by its clock. Each
 * {@link #view()} is one client's: it shares the permits and has release watches of its own.
 */
public final class InMemoryPermitStore {
  private final MonotonicClock serverClock;
  private final ReentrantLock lock = new ReentrantLock();
  private final Map<String, Map<String, Grant>> semaphores = new HashMap<>();
  private final Map<String, Long> fences = new HashMap<>();
  private final Map<String, Set<ReleaseListener>> watchers = new ConcurrentHashMap<>();

  private record Grant(int count, long token, long expiresAt, String holder) {}

  InMemoryPermitStore(MonotonicClock serverClock) {
    this.serverClock = serverClock;
  }

  /** The grants of {@code semaphore} whose lease has not ended, by owner key; under the lock. */
  private Map<String, Grant> live(String semaphore) {
    Map<String, Grant> grants = semaphores.computeIfAbsent(semaphore, s -> new LinkedHashMap<>());
    long now = serverClock.nanoTime();
    grants.values().removeIf(g -> g.expiresAt - now <= 0);
    return grants;
  }

  private void signal(String semaphore) {
    watchers.getOrDefault(semaphore, Set.of()).forEach(l -> l.released(null));
  }

  /** A client's view: shared permits, its own release watches. */
  public PermitStore view() {
    return new View();
  }

  private final class View implements PermitStore {
    private final Map<String, ReleaseListener> mine = new ConcurrentHashMap<>();

    @Override
    public CompletableFuture<AcquireResult> tryAcquire(
        String semaphore, int permits, int count, LockOwner owner, Duration lease) {
      lock.lock();
      try {
        long now = serverClock.nanoTime();
        Map<String, Grant> grants = live(semaphore);
        Grant mineAlready = grants.get(owner.key());
        if (mineAlready != null) { // a repeated request: extends, adds nothing
          long later = Math.max(mineAlready.expiresAt - now, lease.toNanos()) + now;
          grants.put(
              owner.key(),
              new Grant(mineAlready.count, mineAlready.token, later, mineAlready.holder));
          return CompletableFuture.completedFuture(new AcquireResult.Granted(mineAlready.token, 1));
        }
        int held = grants.values().stream().mapToInt(Grant::count).sum();
        if (held + count <= permits) {
          long token = fences.merge(semaphore, 1L, Long::sum);
          grants.put(
              owner.key(),
              new Grant(count, token, now + lease.toNanos(), HolderDescription.of(owner)));
          return CompletableFuture.completedFuture(new AcquireResult.Granted(token, 1));
        }
        long soonest = grants.values().stream().mapToLong(g -> g.expiresAt - now).min().orElse(0);
        return CompletableFuture.completedFuture(
            new AcquireResult.Held(Duration.ofNanos(Math.max(0, soonest))));
      } finally {
        lock.unlock();
      }
    }

    @Override
    public CompletableFuture<ReleaseResult> release(
        String semaphore, LockOwner owner, long fencingToken) {
      boolean released;
      lock.lock();
      try {
        Map<String, Grant> grants = live(semaphore);
        Grant grant = grants.get(owner.key());
        released = grant != null && grant.token == fencingToken;
        if (released) {
          grants.remove(owner.key());
        }
      } finally {
        lock.unlock();
      }
      if (released) {
        signal(semaphore);
      }
      return CompletableFuture.completedFuture(
          released ? ReleaseResult.RELEASED : ReleaseResult.NOT_HELD);
    }

    @Override
    public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
      Set<HeldLease> gone = new HashSet<>();
      lock.lock();
      try {
        for (HeldLease held : leases) {
          Map<String, Grant> grants = live(held.lockName());
          Grant grant = grants.get(held.owner().key());
          if (grant == null || grant.token != held.fencingToken()) {
            gone.add(held);
          } else {
            grants.put(
                held.owner().key(),
                new Grant(
                    grant.count,
                    grant.token,
                    serverClock.nanoTime() + held.lease().toNanos(),
                    grant.holder));
          }
        }
      } finally {
        lock.unlock();
      }
      return CompletableFuture.completedFuture(gone);
    }

    @Override
    public CompletableFuture<Void> watchReleases(String semaphore, ReleaseListener listener) {
      mine.put(semaphore, listener);
      watchers.computeIfAbsent(semaphore, s -> ConcurrentHashMap.newKeySet()).add(listener);
      return CompletableFuture.completedFuture(null);
    }

    @Override
    public void unwatchReleases(String semaphore) {
      ReleaseListener listener = mine.remove(semaphore);
      if (listener != null) {
        watchers.getOrDefault(semaphore, Set.of()).remove(listener);
      }
    }

    @Override
    public CompletableFuture<List<PermitInfo>> holders(String semaphore) {
      lock.lock();
      try {
        List<PermitInfo> infos = new ArrayList<>();
        for (Grant grant : live(semaphore).values()) {
          infos.add(info(semaphore, grant));
        }
        infos.sort(java.util.Comparator.comparingLong(PermitInfo::fencingToken));
        return CompletableFuture.completedFuture(infos);
      } finally {
        lock.unlock();
      }
    }

    @Override
    public CompletableFuture<Optional<PermitInfo>> forceRelease(
        String semaphore, long fencingToken) {
      Optional<PermitInfo> before = Optional.empty();
      lock.lock();
      try {
        Map<String, Grant> grants = live(semaphore);
        for (Map.Entry<String, Grant> e : new HashMap<>(grants).entrySet()) {
          if (e.getValue().token == fencingToken) {
            before = Optional.of(info(semaphore, e.getValue()));
            grants.remove(e.getKey());
          }
        }
      } finally {
        lock.unlock();
      }
      if (before.isPresent()) {
        signal(semaphore);
      }
      return CompletableFuture.completedFuture(before);
    }

    /** Stops this view's watches (its client closed). */
    void close() {
      mine.forEach((s, l) -> watchers.getOrDefault(s, Set.of()).remove(l));
      mine.clear();
    }
  }

  /** Stops the watches of a view made by {@link #view()}. */
  static void close(PermitStore view) {
    ((View) view).close();
  }

  private PermitInfo info(String semaphore, Grant grant) {
    return new PermitInfo(
        semaphore,
        grant.holder,
        grant.token,
        grant.count,
        null,
        Duration.ofNanos(Math.max(0, grant.expiresAt - serverClock.nanoTime())));
  }
}
