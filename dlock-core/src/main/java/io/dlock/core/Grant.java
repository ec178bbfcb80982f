package io.dlock.core;

import io.dlock.HeldLeaseInfo;
import io.dlock.LockLostException;
import io.dlock.LockOptions;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LockOwner;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * One grant of a lock by the backend: whose it is (the owner token), its fencing token and options,
 * and the holds opened on it. Its other parts are superclasses, not fields, so that a grant stays
 * one object (a client may hold many thousands): its lease's timing is {@link LeaseTerm}'s, its
 * state and validity {@link GrantValidity}'s, its open holds {@link GrantHolds}', its loss and
 * lost-lease listeners {@link GrantLoss}'. How a hold is released is {@link GrantRelease}'s, and
 * what close() does with the grant {@link GrantClose}'s. State changes happen under a small lock
 * (this object's monitor, shared by all those layers) that never covers I/O.
 */
final class Grant extends GrantLoss {
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

  /** The background release of a lost hold, while one was sent; see {@link #pendingCleanup}. */
  private volatile @Nullable CompletableFuture<Void> pendingCleanup;

  // Who hears of the session's suspension and restoration (an election's uncertain term).
  private final List<SessionListener> sessionListeners = new CopyOnWriteArrayList<>();

  private record SessionListener(Consumer<Boolean> listener, Executor executor) {}

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

  @Override
  long nowNanos() {
    return client.clock().nanoTime();
  }

  @Override
  CoreLockClient client() {
    return client;
  }

  @Override
  String lockName() {
    return key.lockName();
  }

  GrantKey key() {
    return key;
  }

  @Override
  long fencingToken() {
    return fencingToken;
  }

  LockOptions options() {
    return options;
  }

  boolean autoRenew() {
    return options.autoRenew();
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
  boolean holdCountOnServer() {
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

  /**
   * Sets the lease to {@code leaseNanos} from now on the server (see {@link
   * io.dlock.Lease#extend}), waiting for the answer; see {@link LeaseRenewer#extend}.
   */
  void extend(long leaseNanos) {
    client.ensureOpen();
    client.renewer().extend(this, leaseNanos);
  }

  /** The last background release of a lost hold of this grant, or null if none was sent. */
  @Nullable CompletableFuture<Void> pendingCleanup() {
    return pendingCleanup;
  }

  /** A release of a lost hold was sent in the background ({@link GrantRelease#release}). */
  void cleanupSent(CompletableFuture<Void> cleanup) {
    pendingCleanup = cleanup;
  }

  /** Tells {@code listener}, on {@code executor}, of each suspension (true) and restoration. */
  void onSessionChange(Consumer<Boolean> listener, Executor executor) {
    sessionListeners.add(new SessionListener(listener, executor));
  }

  @Override
  void sessionChanged(boolean suspended) {
    for (SessionListener each : sessionListeners) {
      try {
        each.executor().execute(() -> each.listener().accept(suspended));
      } catch (RuntimeException e) {
        // The client is closing: its end tells the holders.
      }
    }
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
