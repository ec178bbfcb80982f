package io.dlock.spi;

import io.dlock.MonotonicClock;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The lease ends a backend keeps for holds that no server clock expires (holds bound to a session
 * or a connection: a ZooKeeper node, a database session or row lock), timed once for every backend:
 * one timer task, at the earliest registered end, for all the holds of a backend, on the client's
 * clock. When a registered end comes due, the backend's callback runs on the timer thread with the
 * hold; the backend then decides on its own state (a hold extended since it registered registers
 * again) and does the server operation that ends the hold elsewhere, never on the timer thread.
 *
 * <p>A hold has at most one registration: registering again replaces it. Holds are told apart by
 * identity.
 *
 * @param <H> the backend's record of one hold
 */
public final class LeaseEndTimer<H> {
  private static final Logger log = LoggerFactory.getLogger(LeaseEndTimer.class);

  private final ScheduledExecutorService timer;
  private final Consumer<H> due;

  /** Registered lease ends, earliest first; one timer task runs at the earliest (see tick). */
  private final ConcurrentSkipListSet<Mark<H>> marks = new ConcurrentSkipListSet<>();

  /** The current registration of each hold, by identity. */
  private final ConcurrentHashMap<Identity<H>, Mark<H>> current = new ConcurrentHashMap<>();

  private final AtomicLong seq = new AtomicLong();
  private final AtomicBoolean clockSet = new AtomicBoolean();
  // The client's clock once the backend starts (see useClock), before any lease is registered.
  private volatile MonotonicClock clock = MonotonicClock.SYSTEM;
  private volatile long originNanos = clock.nanoTime();

  private final ReentrantLock tickLock = new ReentrantLock();
  private @Nullable ScheduledFuture<?> nextTick; // guarded by tickLock
  private long nextTickAt; // guarded by tickLock

  /**
   * @param timer a timer thread of the backend ({@link DriverThreads#timer}), shut down by it
   * @param due called on the timer thread with a hold whose registered end came due; it must not
   *     block
   */
  public LeaseEndTimer(ScheduledExecutorService timer, Consumer<H> due) {
    this.timer = timer;
    this.due = due;
  }

  /**
   * Measures lease ends on {@code clock}, the client's, from now on: called once, when the backend
   * starts, before any lease is registered.
   *
   * @throws IllegalStateException if called before: re-basing would move the registered ends
   */
  public void useClock(MonotonicClock clock) {
    if (!clockSet.compareAndSet(false, true)) {
      throw new IllegalStateException(
          "This backend was started already by another client: a backend belongs to one client;"
              + " connect one backend per client (LockClients.create closes it with the client)");
    }
    this.originNanos = clock.nanoTime();
    this.clock = clock;
  }

  /** Now, on the clock that lease ends are measured on. */
  public long now() {
    return clock.nanoTime();
  }

  /** Registers the end of {@code hold}'s lease, {@code endNanos} on {@link #now()}'s clock. */
  public void register(H hold, long endNanos) {
    Mark<H> mark = new Mark<>(endNanos - originNanos, seq.incrementAndGet(), hold);
    Mark<H> replaced = current.put(new Identity<>(hold), mark);
    if (replaced != null) {
      marks.remove(replaced);
    }
    marks.add(mark);
    tickNoLaterThan(mark.at);
  }

  /** Whether {@code hold}'s lease end is registered (and not yet due). */
  public boolean isRegistered(H hold) {
    return current.containsKey(new Identity<>(hold));
  }

  /** Drops {@code hold}'s registration, if any: its lease no longer ends here. */
  public void unregister(H hold) {
    Mark<H> mark = current.remove(new Identity<>(hold));
    if (mark != null) {
      marks.remove(mark);
    }
  }

  /**
   * Makes sure the timer runs no later than {@code at}. In the common case (leases of one length,
   * granted one after another) a run is already due earlier, so a grant neither schedules a task
   * nor wakes the timer thread.
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

  /**
   * Hands over the registrations that are due, and schedules the next run for the earliest other.
   */
  private void tick() {
    tickLock.lock();
    try {
      nextTick = null; // marks registered from now on schedule a run themselves
    } finally {
      tickLock.unlock();
    }
    long now = clock.nanoTime() - originNanos;
    while (true) {
      Mark<H> first = marks.pollFirst();
      if (first == null) {
        return;
      }
      if (first.at - now > 0) {
        marks.add(first);
        tickNoLaterThan(first.at);
        return;
      }
      if (current.remove(new Identity<>(first.hold), first)) {
        try {
          due.accept(first.hold);
        } catch (RuntimeException e) {
          // The other due holds must still be handed over; this one's backend logs its own.
          log.warn("A lease end could not be handled: {}", e.toString());
        }
      }
    }
  }

  /**
   * One registration, ordered by {@code at} (nanoseconds since the timer's origin, so plain
   * comparison is safe) and then by registration.
   */
  private record Mark<H>(long at, long seq, H hold) implements Comparable<Mark<H>> {
    @Override
    public int compareTo(Mark<H> other) {
      int byTime = Long.compare(at, other.at);
      return byTime != 0 ? byTime : Long.compare(seq, other.seq);
    }

    @Override
    public boolean equals(Object o) {
      return this == o;
    }

    @Override
    public int hashCode() {
      return Long.hashCode(seq);
    }
  }

  /** A hold as a map key, by identity. */
  private record Identity<H>(H hold) {
    @Override
    public boolean equals(Object o) {
      return o instanceof Identity<?> other && other.hold == hold;
    }

    @Override
    public int hashCode() {
      return System.identityHashCode(hold);
    }
  }
}
