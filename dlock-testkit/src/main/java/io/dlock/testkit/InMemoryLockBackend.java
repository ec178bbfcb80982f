package io.dlock.testkit;

import io.dlock.LockInfo;
import io.dlock.MonotonicClock;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.HeldLease;
import io.dlock.spi.HolderDescription;
import io.dlock.spi.LockAdministration;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockOwner;
import io.dlock.spi.PermitStore;
import io.dlock.spi.ReleaseListener;
import io.dlock.spi.ReleaseResult;
import io.dlock.spi.ReleaseSignals;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A backend kept in this JVM's memory, with lease expiry judged by its own clock (the "server
 * clock"). For unit tests of code that uses dlock, and for testing the core against the contract
 * without a server. Several clients share one instance to contend with each other. Not distributed,
 * obviously.
 */
public final class InMemoryLockBackend implements LockBackend, ReleaseSignals, LockAdministration {
  private final MonotonicClock serverClock;
  private final ReentrantLock lock = new ReentrantLock();
  private final Map<String, Entry> locks = new HashMap<>();
  private final Map<String, Long> fences = new HashMap<>();
  private final Map<String, Set<ReleaseListener>> watchers = new ConcurrentHashMap<>();
  private final InMemoryPermitStore semaphores;
  private final PermitStore permits;

  private record Entry(String owner, int holds, long token, long expiresAt, String holder) {}

  public InMemoryLockBackend() {
    this(MonotonicClock.SYSTEM);
  }

  public InMemoryLockBackend(MonotonicClock serverClock) {
    this.serverClock = serverClock;
    this.semaphores = new InMemoryPermitStore(serverClock);
    this.permits = semaphores.view();
  }

  /**
   * A view of this backend for one more client: it shares the locks, but closing it closes nothing
   * and its release watches are its own.
   */
  public LockBackend sharedView() {
    InMemoryLockBackend server = this;
    return new ForwardingLockBackend(this) {
      private final Map<String, ReleaseListener> mine = new ConcurrentHashMap<>();
      private final PermitStore myPermits = server.semaphores.view();

      @Override
      public Optional<PermitStore> permits() {
        return Optional.of(myPermits);
      }

      @Override
      public CompletableFuture<Void> watchReleases(String n, ReleaseListener listener) {
        mine.put(n, listener);
        return super.watchReleases(n, listener);
      }

      @Override
      public void unwatchReleases(String n) {
        ReleaseListener r = mine.remove(n);
        if (r != null) {
          server.watchers.getOrDefault(n, Set.of()).remove(r);
        }
      }

      @Override
      public void close() {
        mine.forEach((n, r) -> server.watchers.getOrDefault(n, Set.of()).remove(r));
        InMemoryPermitStore.close(myPermits);
      }
    };
  }

  /** Deletes a lock as an operator would. */
  public void delete(String name) {
    lock.lock();
    try {
      locks.remove(name);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public String name() {
    return "in-memory";
  }

  private Entry live(String name) {
    Entry e = locks.get(name);
    if (e != null && e.expiresAt - serverClock.nanoTime() <= 0) {
      locks.remove(name);
      return null;
    }
    return e;
  }

  @Override
  public CompletableFuture<AcquireResult> tryAcquire(
      String name, LockOwner lockOwner, Duration lease) {
    String owner = lockOwner.key();
    lock.lock();
    try {
      long expiresAt = serverClock.nanoTime() + lease.toNanos();
      Entry e = live(name);
      if (e == null) {
        long token = fences.merge(name, 1L, Long::sum);
        locks.put(name, new Entry(owner, 1, token, expiresAt, HolderDescription.of(lockOwner)));
        return CompletableFuture.completedFuture(new AcquireResult.Granted(token, 1));
      }
      if (e.owner.equals(owner)) {
        // Owner ids count holds; a grant owner asking again is a repeated request.
        int holds = lockOwner.countsHolds() ? e.holds + 1 : e.holds;
        long later = e.expiresAt - expiresAt > 0 ? e.expiresAt : expiresAt; // never shorten
        locks.put(name, new Entry(owner, holds, e.token, later, e.holder));
        return CompletableFuture.completedFuture(new AcquireResult.Granted(e.token, holds));
      }
      return CompletableFuture.completedFuture(
          new AcquireResult.Held(Duration.ofNanos(e.expiresAt - serverClock.nanoTime())));
    } finally {
      lock.unlock();
    }
  }

  @Override
  public CompletableFuture<ReleaseResult> release(
      String name, LockOwner lockOwner, long fencingToken) {
    String owner = lockOwner.key();
    ReleaseResult result;
    lock.lock();
    try {
      Entry e = live(name);
      if (e == null || !e.owner.equals(owner) || e.token != fencingToken) {
        result = ReleaseResult.NOT_HELD;
      } else if (e.holds > 1) {
        locks.put(name, new Entry(owner, e.holds - 1, e.token, e.expiresAt, e.holder));
        result = ReleaseResult.STILL_HELD;
      } else {
        locks.remove(name);
        result = ReleaseResult.RELEASED;
      }
    } finally {
      lock.unlock();
    }
    if (result == ReleaseResult.RELEASED) {
      watchers.getOrDefault(name, Set.of()).forEach(l -> l.released(null));
    }
    return CompletableFuture.completedFuture(result);
  }

  @Override
  public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
    Set<HeldLease> gone = new HashSet<>();
    lock.lock();
    try {
      for (HeldLease held : leases) {
        Entry e = live(held.lockName());
        if (e == null || !e.owner.equals(held.owner().key()) || e.token != held.fencingToken()) {
          gone.add(held);
        } else {
          long renewed = serverClock.nanoTime() + held.lease().toNanos();
          if (held.owner().ownerId() != null && e.expiresAt - renewed > 0) {
            // An owner id's lock is never shortened by a renewal, whatever its hold count: a
            // renewal answered after its own hold's release meets another client's hold.
            renewed = e.expiresAt;
          }
          locks.put(held.lockName(), new Entry(e.owner, e.holds, e.token, renewed, e.holder));
        }
      }
    } finally {
      lock.unlock();
    }
    return CompletableFuture.completedFuture(gone);
  }

  @Override
  public Optional<ReleaseSignals> releaseSignals() {
    return Optional.of(this);
  }

  @Override
  public Optional<PermitStore> permits() {
    return Optional.of(permits);
  }

  @Override
  public Optional<LockAdministration> administration() {
    return Optional.of(this);
  }

  @Override
  public CompletableFuture<Void> watchReleases(String name, ReleaseListener onRelease) {
    watchers.computeIfAbsent(name, n -> ConcurrentHashMap.newKeySet()).add(onRelease);
    return CompletableFuture.completedFuture(null);
  }

  @Override
  public void unwatchReleases(String name) {
    watchers.remove(name);
  }

  @Override
  public CompletableFuture<List<LockInfo>> inspect(String namePattern) {
    java.util.regex.Pattern glob =
        java.util.regex.Pattern.compile(
            java.util.regex.Pattern.quote(namePattern)
                .replace("*", "\\E.*\\Q")
                .replace("?", "\\E.\\Q"));
    lock.lock();
    try {
      List<LockInfo> infos = new java.util.ArrayList<>();
      for (String name : List.copyOf(locks.keySet())) {
        Entry e = live(name);
        if (e != null && glob.matcher(name).matches()) {
          infos.add(info(name, e));
        }
      }
      infos.sort(java.util.Comparator.comparing(LockInfo::name));
      return CompletableFuture.completedFuture(infos);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public CompletableFuture<Optional<LockInfo>> forceRelease(String name) {
    Optional<LockInfo> before;
    lock.lock();
    try {
      Entry e = live(name);
      before = e == null ? Optional.empty() : Optional.of(info(name, e));
      locks.remove(name);
    } finally {
      lock.unlock();
    }
    watchers.getOrDefault(name, Set.of()).forEach(l -> l.released(null));
    return CompletableFuture.completedFuture(before);
  }

  private LockInfo info(String name, Entry e) {
    return new LockInfo(
        name,
        e.holder,
        e.token,
        e.holds,
        null,
        Duration.ofNanos(Math.max(0, e.expiresAt - serverClock.nanoTime())));
  }

  @Override
  public void close() {
    watchers.clear();
    InMemoryPermitStore.close(permits);
  }
}
