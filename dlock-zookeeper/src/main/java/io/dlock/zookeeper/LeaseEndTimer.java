package io.dlock.zookeeper;

import io.dlock.MonotonicClock;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import org.jspecify.annotations.Nullable;

/**
 * The end of the lease this backend keeps for each holder (see the class comment of {@link
 * ZooKeeperLockBackend}): one timer task, at the earliest registered lease end, for all the holders
 * of the backend. When a registered end comes due, {@link QueueLeases#leaseEnded} is called on the
 * timer thread; it finds a later end if the lease was extended meanwhile, and registers again.
 */
final class LeaseEndTimer {
  /** Registered lease ends, earliest first; one timer task runs at the earliest (see tick). */
  private final ConcurrentSkipListSet<LeaseMark> leaseMarks = new ConcurrentSkipListSet<>();

  private final AtomicLong leaseSeq = new AtomicLong();
  // The client's clock once the backend starts (see useClock), before any lease is registered.
  private volatile MonotonicClock clock = MonotonicClock.SYSTEM;
  private volatile long originNanos = clock.nanoTime();
  private final java.util.concurrent.atomic.AtomicBoolean clockSet =
      new java.util.concurrent.atomic.AtomicBoolean();
  private final ReentrantLock tickLock = new ReentrantLock();
  private @Nullable ScheduledFuture<?> nextTick; // guarded by tickLock
  private long nextTickAt; // guarded by tickLock

  private final ScheduledExecutorService timer;
  private final BiConsumer<LockAndOwner, QueueEntry> leaseEnded;

  /**
   * @param timer the backend's timer thread, shut down by the backend
   * @param leaseEnded called on the timer thread with an entry whose registered end came due
   */
  LeaseEndTimer(ScheduledExecutorService timer, BiConsumer<LockAndOwner, QueueEntry> leaseEnded) {
    this.timer = timer;
    this.leaseEnded = leaseEnded;
  }

  /**
   * Measures lease ends on {@code clock}, the client's, from now on; called when the backend
   * starts, before any lease is registered.
   */
  void useClock(MonotonicClock clock) {
    if (!clockSet.compareAndSet(false, true)) {
      // Re-basing would move the lease ends already registered.
      throw new IllegalStateException(
          "This ZooKeeper backend was started already by another client: a backend belongs to one"
              + " client; connect one backend per client (LockClients.create closes it with the"
              + " client)");
    }
    this.originNanos = clock.nanoTime();
    this.clock = clock;
  }

  /** Now, on the clock that lease ends are measured on. */
  long now() {
    return clock.nanoTime();
  }

  /**
   * Moves the end of the lease kept by this backend; when it passes without another extension, the
   * holder's node is deleted (see the class comment).
   */
  void extendLease(LockAndOwner key, QueueEntry entry, long until) {
    if (until - entry.leaseEndNanos > 0) {
      entry.leaseEndNanos = until;
    }
    if (entry.leaseMark == null) {
      scheduleLeaseEnd(key, entry);
    }
  }

  /**
   * Registers the entry's lease end with the one lease timer. An extension does not touch the
   * registration: when it comes due, {@code leaseEnded} finds the later end and registers again.
   */
  void scheduleLeaseEnd(LockAndOwner key, QueueEntry entry) {
    LeaseMark mark =
        new LeaseMark(entry.leaseEndNanos - originNanos, leaseSeq.incrementAndGet(), key, entry);
    entry.leaseMark = mark;
    leaseMarks.add(mark);
    tickNoLaterThan(mark.at);
  }

  /** Drops the entry's registration, if any: its lease no longer ends here. */
  void unregister(QueueEntry entry) {
    LeaseMark mark = entry.leaseMark;
    if (mark != null) {
      leaseMarks.remove(mark);
      entry.leaseMark = null;
    }
  }

  /**
   * Makes sure the lease timer runs no later than {@code at}. In the common case (leases of one
   * length, granted one after another) a timer run is already due earlier, so a grant neither
   * schedules a task nor wakes the timer thread.
   */
  private void tickNoLaterThan(long at) {
    tickLock.lock();
    try {
      ScheduledFuture<?> scheduled = nextTick;
      if (scheduled != null && nextTickAt - at <= 0) {
        return;
      }
      if (scheduled != null) {
        scheduled.cancel(false);
      }
      nextTickAt = at;
      long delay = Math.max(0, at - (clock.nanoTime() - originNanos));
      nextTick = timer.schedule(this::tick, delay, TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      nextTick = null; // closing
    } finally {
      tickLock.unlock();
    }
  }

  /** Handles the lease marks that are due, and schedules the next run for the earliest other. */
  private void tick() {
    tickLock.lock();
    try {
      nextTick = null; // marks registered from now on schedule a run themselves
    } finally {
      tickLock.unlock();
    }
    long now = clock.nanoTime() - originNanos;
    while (true) {
      LeaseMark first = leaseMarks.pollFirst();
      if (first == null) {
        return;
      }
      if (first.at - now > 0) {
        leaseMarks.add(first);
        tickNoLaterThan(first.at);
        return;
      }
      QueueEntry entry = first.entry;
      if (entry.leaseMark == first) {
        entry.leaseMark = null;
        leaseEnded.accept(first.key, entry);
      }
    }
  }

  /**
   * A lease end registered with the lease timer, ordered by {@code at} (nanoseconds since the
   * timer's origin, so plain comparison is safe) and then by registration.
   */
  record LeaseMark(long at, long seq, LockAndOwner key, QueueEntry entry)
      implements Comparable<LeaseMark> {
    @Override
    public int compareTo(LeaseMark other) {
      int byTime = Long.compare(at, other.at);
      return byTime != 0 ? byTime : Long.compare(seq, other.seq);
    }
  }
}
