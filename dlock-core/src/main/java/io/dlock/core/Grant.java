package io.dlock.core;

import io.dlock.HeldLeaseInfo;
import io.dlock.LeaseLostEvent;
import io.dlock.LeaseState;
import io.dlock.LockLostException;
import io.dlock.LockOptions;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LockOwner;
import io.dlock.spi.ReleaseResult;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One grant of a lock by the backend: its owner token, fencing token, state, lost-lease listeners
 * and the open leases (holds) that share it; its lease's timing is {@link LeaseTerm}'s. State
 * changes happen under a small lock (this object's monitor, shared with {@link LeaseTerm}) that
 * never covers I/O.
 */
final class Grant extends LeaseTerm {
  private static final Logger log = LoggerFactory.getLogger(Grant.class);

  private final CoreLockClient client;
  private final GrantKey key;

  /**
   * The owner where it is not kept as {@link #ownerHigh} and {@link #ownerLow}: an owner id (whose
   * holds the server counts), or a key that {@link OwnerTokens} did not make. Null otherwise.
   */
  private final @Nullable LockOwner keptOwner;

  /** A grant owner's 128 random bits (see {@link OwnerTokens#bitsOf}); unused with keptOwner. */
  private final long ownerHigh;

  private final long ownerLow;
  private final long fencingToken;
  private final LockOptions options;
  private final long heldSinceMillis = System.currentTimeMillis();

  /**
   * The open holds: null, one {@link LeaseHandle}, or an {@link ArrayDeque} of them once the holder
   * re-entered. Most grants are held once, and a client may hold many thousands of them, so the
   * common case allocates nothing extra.
   */
  private @Nullable Object openHandles;

  /** The background release of a lost hold, while one was sent; see {@link #pendingCleanup}. */
  private volatile @Nullable CompletableFuture<Void> pendingCleanup;

  /** Lost-lease listeners; created on the first registration. */
  private @Nullable List<Consumer<LeaseLostEvent>> listeners;

  private @Nullable LeaseLostEvent lostEvent;

  /** See {@link #handedOut()}; guarded by this grant's monitor, as is {@link #lossReported}. */
  private boolean handedOut;

  private boolean lossReported;

  /** See {@link #startClosing}; guarded by this grant's monitor. */
  private boolean closing;

  private volatile LeaseState state = LeaseState.VALID;

  Grant(
      CoreLockClient client,
      GrantKey key,
      LockOwner owner,
      long fencingToken,
      LockOptions options,
      long requestSentAtNanos) {
    this.client = client;
    this.key = key;
    long[] bits = OwnerTokens.bitsOf(owner);
    this.keptOwner = bits == null ? owner : null;
    this.ownerHigh = bits == null ? 0 : bits[0];
    this.ownerLow = bits == null ? 0 : bits[1];
    this.fencingToken = fencingToken;
    this.options = options;
    granted(requestSentAtNanos, options.leaseTime().toNanos());
  }

  @Override
  Duration optionsLeaseTime() {
    return options.leaseTime();
  }

  @Override
  boolean sharedByOtherHolders() {
    return holdCountOnServer();
  }

  String lockName() {
    return key.lockName();
  }

  GrantKey key() {
    return key;
  }

  long fencingToken() {
    return fencingToken;
  }

  LockOptions options() {
    return options;
  }

  /** This grant's lease to renew, with the length asked for now. */
  HeldLease heldLease() {
    return new HeldLease(key.lockName(), owner(), fencingToken, leaseTime());
  }

  /** This grant's lease with another length: an extension. */
  HeldLease heldLease(long leaseNanos) {
    return new HeldLease(key.lockName(), owner(), fencingToken, Duration.ofNanos(leaseNanos));
  }

  LockEvents lockEvents() {
    return client.lockEvents();
  }

  /** The owner, rendered again for each call where it is kept as bits: for backend calls only. */
  LockOwner owner() {
    LockOwner kept = keptOwner;
    return kept != null ? kept : OwnerTokens.ofBits(ownerHigh, ownerLow);
  }

  /** Whether the server counts this grant's holds (an owner id), not only this client. */
  private boolean holdCountOnServer() {
    LockOwner kept = keptOwner;
    return kept != null && kept.countsHolds();
  }

  /**
   * Opens one more hold on this grant.
   *
   * @throws LockLostException if the grant is no longer valid: a holder cannot re-enter a lock it
   *     has lost, it must release the lost lease first
   */
  LeaseHandle open() {
    synchronized (this) {
      if (!isValid()) {
        throw new LockLostException(
            "Cannot re-enter lock '"
                + key.lockName()
                + "': the grant with fencing token "
                + fencingToken
                + " is "
                + state().name().toLowerCase(java.util.Locale.ROOT)
                + "; release the lost lease before acquiring again");
      }
      LeaseHandle handle = new LeaseHandle(this, client.clock().nanoTime());
      addHandle(handle);
      return handle;
    }
  }

  /**
   * Adds a hold that the server already counted (owner-id re-entry), if this grant is still valid.
   *
   * @return the new hold, or null if the grant is no longer valid
   */
  @Nullable LeaseHandle openCounted(long requestSentAtNanos) {
    synchronized (this) {
      if (!isValid()) {
        return null;
      }
      LeaseHandle handle = open();
      confirmedCountedHold(requestSentAtNanos);
      return handle;
    }
  }

  @Nullable LeaseHandle lastOpenHandle() {
    synchronized (this) {
      return lastHandle();
    }
  }

  int holdCount() {
    synchronized (this) {
      return handleCount();
    }
  }

  // isValid, state and remaining read the trusted end under the monitor, where an answer that
  // would move it later checks that it has not passed (LeaseTerm#renewed): once a reader saw the
  // lease run out, it stays lost, whatever a renewal answered just after says (found by review).

  boolean isValid() {
    synchronized (this) {
      return state == LeaseState.VALID && validUntilNanos() - nowNanos() > 0;
    }
  }

  /**
   * Whether the grant is lost or released: a state it never leaves. Such a grant is never renewed
   * again.
   */
  boolean hasEnded() {
    LeaseState s = state;
    return s == LeaseState.LOST || s == LeaseState.RELEASED;
  }

  LeaseState state() {
    synchronized (this) {
      LeaseState s = state;
      if ((s == LeaseState.VALID || s == LeaseState.UNCERTAIN)
          && validUntilNanos() - nowNanos() <= 0) {
        return LeaseState.LOST;
      }
      return s;
    }
  }

  Duration remaining() {
    synchronized (this) {
      long left = validUntilNanos() - nowNanos();
      return state == LeaseState.VALID && left > 0 ? Duration.ofNanos(left) : Duration.ZERO;
    }
  }

  @Override
  long nowNanos() {
    return client.clock().nanoTime();
  }

  boolean autoRenew() {
    return options.autoRenew();
  }

  /**
   * Sets the lease to {@code leaseNanos} from now on the server (see {@link
   * io.dlock.Lease#extend}), waiting for the answer; see {@link LeaseRenewer#extend}.
   */
  void extend(long leaseNanos) {
    client.ensureOpen();
    client.renewer().extend(this, leaseNanos);
  }

  /** The backend cannot confirm the lease for now: not valid until restored. */
  void suspend() {
    synchronized (this) {
      if (state == LeaseState.VALID) {
        state = LeaseState.UNCERTAIN;
      }
    }
  }

  /** The backend's session is back: an uncertain lease is valid again (if not run out). */
  void restore() {
    synchronized (this) {
      if (state == LeaseState.UNCERTAIN) {
        state = LeaseState.VALID;
      }
    }
  }

  /** The last background release of a lost hold of this grant, or null if none was sent. */
  @Nullable CompletableFuture<Void> pendingCleanup() {
    return pendingCleanup;
  }

  /**
   * The grant reached its holder: its loss from now on is reported to the client's event listener
   * (a grant undone before anybody had it, its request having seen its session lost, is no loss to
   * report). A loss that came first is reported now.
   */
  void handedOut() {
    LeaseLostEvent toReport = null;
    synchronized (this) {
      handedOut = true;
      if (lostEvent != null && !lossReported) {
        lossReported = true;
        toReport = lostEvent;
      }
    }
    if (toReport != null) {
      client.reportLost(toReport);
    }
  }

  /** Marks the grant lost and tells its listeners, once. No effect once released or lost. */
  boolean markLost(LeaseLostEvent.Reason reason, String detail) {
    List<Consumer<LeaseLostEvent>> toTell;
    LeaseLostEvent event;
    boolean report;
    synchronized (this) {
      if (state == LeaseState.LOST || state == LeaseState.RELEASED) {
        return false;
      }
      state = LeaseState.LOST;
      event = new LeaseLostEvent(key.lockName(), fencingToken, reason, detail);
      lostEvent = event;
      toTell = listeners == null ? List.of() : List.copyOf(listeners);
      listeners = null;
      report = handedOut && !lossReported;
      lossReported |= report;
    }
    log.warn(
        "Lease of lock '{}' (fencing token {}) lost: {} ({})",
        key.lockName(),
        fencingToken,
        reason,
        detail);
    for (Consumer<LeaseLostEvent> listener : toTell) {
      client.dispatch(listener, event);
    }
    if (report) {
      client.reportLost(event);
    }
    return true;
  }

  void addLostListener(Consumer<LeaseLostEvent> listener) {
    LeaseLostEvent event;
    synchronized (this) {
      event = lostEvent;
      if (event == null) {
        if (state != LeaseState.RELEASED || closing) {
          if (listeners == null) {
            listeners = new ArrayList<>(1);
          }
          listeners.add(listener);
        }
        return;
      }
    }
    client.dispatch(listener, event);
  }

  /**
   * close() starts ending this grant's holds (see {@link GrantClose}): listeners registered from
   * now on are kept for its report, even once a holder's own release ended the grant.
   *
   * @return the open holds, newest first
   */
  List<LeaseHandle> startClosing() {
    synchronized (this) {
      closing = true;
      Object current = openHandles;
      if (current == null) {
        return List.of();
      }
      if (current instanceof LeaseHandle single) {
        return List.of(single);
      }
      @SuppressWarnings("unchecked")
      ArrayDeque<LeaseHandle> many = (ArrayDeque<LeaseHandle>) current;
      List<LeaseHandle> newestFirst = new ArrayList<>(many.size());
      many.descendingIterator().forEachRemaining(newestFirst::add);
      return newestFirst;
    }
  }

  /** The lost-lease listeners registered now. */
  List<Consumer<LeaseLostEvent>> lostListeners() {
    synchronized (this) {
      return listeners == null ? List.of() : List.copyOf(listeners);
    }
  }

  /** Whom close() tells that it ended the grant, and whether to report it to the client. */
  record ClosedUnder(List<Consumer<LeaseLostEvent>> listeners, boolean report) {}

  /**
   * close() ended holds of this grant: it is lost to its holders, who did not let it go ({@code
   * event}), unless it was lost already (its loss was told then). A null event: close() ended none
   * (their holders released them first).
   *
   * @param untold whether a release made by close() did not tell the holders itself (false: it
   *     found the lease lost, and told those registered then)
   * @param early the listeners registered when close() started
   * @return whom to tell, or null if nobody
   */
  @Nullable ClosedUnder endedByClose(
      @Nullable LeaseLostEvent event, boolean untold, List<Consumer<LeaseLostEvent>> early) {
    synchronized (this) {
      closing = false;
      if (event == null || state == LeaseState.LOST) {
        return null; // markLost told its listeners and reported it
      }
      state = LeaseState.LOST; // and a listener that comes later is told at once
      lostEvent = event;
      List<Consumer<LeaseLostEvent>> toTell = new ArrayList<>(untold ? early : List.of());
      if (listeners != null) {
        for (Consumer<LeaseLostEvent> listener : listeners) {
          if (!toTell.contains(listener)) {
            toTell.add(listener);
          }
        }
        listeners = null;
      }
      boolean report = untold && handedOut && !lossReported;
      // Reported now or never: a grant close() ended before it was handed out had no holder, and
      // handedOut() must not report it later (its caller is told the client closed).
      lossReported = true;
      return new ClosedUnder(toTell, report);
    }
  }

  /**
   * Lets go of one hold without a word to the server, which keeps it until the lease ends (see
   * {@link io.dlock.Lease#abandon}). The last hold takes the grant out of the client: never
   * renewed, watched or released again.
   */
  void abandon(LeaseHandle handle) {
    int left;
    synchronized (this) {
      removeHandle(handle);
      left = handleCount();
      if (left == 0 && state != LeaseState.LOST) {
        state = LeaseState.RELEASED;
        listeners = null;
      }
    }
    if (left == 0) {
      client.forget(this);
    }
  }

  /**
   * Releases one hold. The last hold of a valid grant deletes the lock on the server; with an owner
   * id, every hold is counted on the server and released there.
   */
  boolean release(LeaseHandle handle) {
    LeaseState now = state;
    if ((now == LeaseState.VALID || now == LeaseState.UNCERTAIN)
        && validUntilNanos() - client.clock().nanoTime() <= 0) {
      // The lease ran out before this release (a pause, a renewal that did not get through): it
      // is lost, whether or not the renewal tick got there first. Saying so now tells the holder
      // at once, and the release below only cleans up without waiting for the server.
      markLost(
          autoRenew() ? LeaseLostEvent.Reason.EXPIRED : LeaseLostEvent.Reason.LEASE_ENDED,
          "the lease of " + leaseTime() + " ran out before its release");
    }
    int left;
    LeaseState before;
    // The listeners of a lease released as a whole are kept until the server answers: a release
    // that finds the grant already gone there (a session lost, the lease expired or taken over
    // while the release waited) is a loss, and they are told of it.
    List<Consumer<LeaseLostEvent>> releasedListeners = List.of();
    synchronized (this) {
      removeHandle(handle);
      left = handleCount();
      before = state;
      if (left == 0 && before != LeaseState.LOST) {
        state = LeaseState.RELEASED;
        if (listeners != null) {
          releasedListeners = listeners;
        }
        listeners = null;
      }
    }
    if (left == 0) {
      client.forget(this);
    }
    if (before == LeaseState.LOST) {
      log.info(
          "Release of lock '{}' (fencing token {}) did nothing for its holder: the lease was"
              + " already lost",
          key.lockName(),
          fencingToken);
      if (left == 0 || holdCountOnServer()) {
        // The server may still count this hold (a lease the client stopped trusting early, or an
        // owner id held on by another hold): drop it there too. Owner-checked, so it never
        // touches another holder's lock; best effort, since the lease is gone anyway.
        pendingCleanup = client.releaseQuietly(key.lockName(), owner(), fencingToken);
      }
      return false;
    }
    if (left > 0 && !holdCountOnServer()) {
      return true;
    }
    ReleaseResult result =
        client.releaseOnBackend(key.lockName(), owner(), fencingToken, options.leaseTime());
    switch (result) {
      case RELEASED:
        client.signalLocalWaiters(key.lockName());
        if (left > 0) {
          // The server dropped its last hold while this client still has some: not ours any more.
          markLost(
              LeaseLostEvent.Reason.TAKEN_OVER,
              "the server released the lock while " + left + " hold(s) remained open");
        }
        return true;
      case STILL_HELD:
        return true;
      case NOT_HELD:
      default:
        if (left == 0) {
          // The last hold's release found the grant gone: the holder worked without the lock.
          LeaseLostEvent event =
              new LeaseLostEvent(
                  key.lockName(),
                  fencingToken,
                  LeaseLostEvent.Reason.TAKEN_OVER,
                  "the release found the grant already gone on the server");
          for (Consumer<LeaseLostEvent> listener : releasedListeners) {
            client.dispatch(listener, event);
          }
          client.reportLost(event);
        }
        if (left > 0) {
          // The server says this owner holds nothing: the holds still open share the lost grant.
          markLost(
              LeaseLostEvent.Reason.TAKEN_OVER,
              "a release found the grant gone on the server while "
                  + left
                  + " hold(s) remained open");
        }
        log.warn(
            "Release of lock '{}' (fencing token {}) did nothing: this owner no longer held it"
                + " (its lease expired or it was taken over); the lock was left untouched",
            key.lockName(),
            fencingToken);
        return false;
    }
  }

  // ---- the open holds; callers hold this grant's monitor ----------------------------------------

  @SuppressWarnings("unchecked")
  private void addHandle(LeaseHandle handle) {
    Object current = openHandles;
    if (current == null) {
      openHandles = handle;
    } else if (current instanceof LeaseHandle single) {
      ArrayDeque<LeaseHandle> many = new ArrayDeque<>(4);
      many.addLast(single);
      many.addLast(handle);
      openHandles = many;
    } else {
      ((ArrayDeque<LeaseHandle>) current).addLast(handle);
    }
  }

  @SuppressWarnings("unchecked")
  private void removeHandle(LeaseHandle handle) {
    Object current = openHandles;
    if (current == handle) {
      openHandles = null;
    } else if (current instanceof ArrayDeque<?> many) {
      ((ArrayDeque<LeaseHandle>) many).remove(handle);
    }
  }

  private @Nullable LeaseHandle lastHandle() {
    Object current = openHandles;
    if (current instanceof LeaseHandle single) {
      return single;
    }
    return current instanceof ArrayDeque<?> many ? (LeaseHandle) many.peekLast() : null;
  }

  private int handleCount() {
    Object current = openHandles;
    if (current == null) {
      return 0;
    }
    return current instanceof ArrayDeque<?> many ? many.size() : 1;
  }

  HeldLeaseInfo info() {
    return new HeldLeaseInfo(
        key.lockName(),
        fencingToken,
        holdCount(),
        Instant.ofEpochMilli(heldSinceMillis),
        remaining(),
        options.autoRenew(),
        state());
  }
}
