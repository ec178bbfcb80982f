package io.dlock.core;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LockOptions;
import io.dlock.MonotonicClock;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.LockOwner;
import java.util.concurrent.CompletableFuture;
import org.jspecify.annotations.Nullable;

/**
 * Makes a backend's grant a lease of this client: its validity counted from the request's send (or
 * from when the backend says its lease began), refused if it arrived after its lease or after a
 * newer grant of its lock (a late answer: {@link TokenHighWater}), added to the client's grants (an
 * owner id's hold to the grant it joins) and to the renewer, and then settled against the session
 * events its request saw in flight. {@link Acquisitions} runs the attempts around it.
 */
final class GrantRegistration {
  private final CoreLockClient client;
  private final String backendName;
  private final MonotonicClock clock;
  private final long operationTimeoutNanos;
  private final SessionEvents sessionEvents;
  private final LeaseRenewer renewer;
  private final TokenHighWater highWater = new TokenHighWater();

  GrantRegistration(
      CoreLockClient client,
      String backendName,
      MonotonicClock clock,
      long operationTimeoutNanos,
      SessionEvents sessionEvents,
      LeaseRenewer renewer) {
    this.client = client;
    this.backendName = backendName;
    this.clock = clock;
    this.operationTimeoutNanos = operationTimeoutNanos;
    this.sessionEvents = sessionEvents;
    this.renewer = renewer;
  }

  /** An acquisition of {@code name} begins: before anything is sent ({@link #exit} ends it). */
  void enter(String name) {
    highWater.enter(name);
  }

  /** The acquisition of {@code name} ended: no answer of it is registered after this. */
  void exit(String name) {
    highWater.exit(name);
  }

  /** Where the high-water marks stand, read before a request is sent: see {@link #register}. */
  long position() {
    return highWater.position();
  }

  /**
   * Registers a grant, then applies the session events its request saw in flight.
   *
   * @return the lease, or null if the session was lost while the request was in flight (the grant
   *     is then released again: it may belong to a session that no longer exists)
   */
  @Nullable Lease register(
      GrantKey key,
      LockOwner owner,
      LockOptions lockOptions,
      AcquireResult.Granted granted,
      long sentAt,
      long sentAtRaise,
      SessionEvents.Request request) {
    LeaseHandle handle;
    try {
      handle = registerGrant(key, owner, lockOptions, granted, sentAt, sentAtRaise);
    } catch (RuntimeException e) {
      sessionEvents.ended(request);
      throw e;
    }
    Grant grant = handle.grant();
    if (sessionEvents.registered(request, grant)) {
      grant.handedOut(); // from now on its loss is the listener's news (not before: see there)
      return handle;
    }
    handle.release(); // the grant is lost: frees this hold on the server, owner- and token-checked
    // A waiting acquisition tries again with the same owner: let the release of the lost grant be
    // answered first (bounded), or the retry could meet that grant still on the server, be handed
    // it (same owner), and then lose it to the release queued before.
    CompletableFuture<Void> cleanup = grant.pendingCleanup();
    if (cleanup != null) {
      try {
        BackendCalls.await(
            cleanup,
            operationTimeoutNanos,
            "release lost grant of '" + key.lockName() + "'",
            backendName);
      } catch (RuntimeException e) {
        // Not answered in time: the attempt after this one fails or waits as the backend does.
      }
    }
    return null;
  }

  private LeaseHandle registerGrant(
      GrantKey key,
      LockOwner owner,
      LockOptions lockOptions,
      AcquireResult.Granted granted,
      long sentAt,
      long sentAtRaise) {
    String name = key.lockName();
    // From the request's send, or as much later as the backend says the request that set the
    // lease went (a JDBC permit's insert), never later than now: AcquireResult.Granted.
    long after = granted.leaseStartedAfterNanos();
    long leaseFrom = after == 0 ? sentAt : Math.min(sentAt + after, clock.nanoTime());
    Grant fresh = new Grant(client, key, owner, granted.fencingToken(), lockOptions, leaseFrom);
    if (!fresh.isValid()) {
      // The answer took longer than the lease: the server may already have let it go.
      client.undoGrant(name, owner, granted.fencingToken());
      throw new BackendUnavailableException(
          "The grant of lock '"
              + name
              + "' arrived after its lease of "
              + lockOptions.leaseTime()
              + " had run out; it was released");
    }
    long newer = highWater.admit(name, granted.fencingToken(), sentAtRaise);
    if (newer != granted.fencingToken()) {
      // A late answer: the name was granted anew after this request was sent (tokens only grow),
      // so this grant has ended on the server, whether or not the newer grant is still here.
      client.undoGrant(name, owner, granted.fencingToken()); // owner- and token-checked: harmless
      throw new StaleGrantException(
          "The grant of lock '"
              + name
              + "' (fencing token "
              + granted.fencingToken()
              + ") was answered after a newer grant of the lock (fencing token "
              + newer
              + "); it has ended on the server and was given back, not handed out: acquire again");
    }
    if (lockOptions.ownerId().isEmpty()) {
      LeaseHandle handle = fresh.open();
      client.grants().put(key, fresh);
      renewer.add(fresh);
      return handle;
    }
    // With an owner id the server counted this hold: add it to this client's grant with the same
    // fencing token, or start a new grant.
    LeaseHandle[] opened = new LeaseHandle[1];
    Grant[] replaced = new Grant[1];
    Grant current =
        client
            .grants()
            .compute(
                key,
                (k, existing) -> {
                  if (existing != null && existing.fencingToken() == granted.fencingToken()) {
                    opened[0] = existing.openCounted(leaseFrom);
                    if (opened[0] != null) {
                      return existing;
                    }
                  }
                  replaced[0] = existing;
                  opened[0] = fresh.open();
                  return fresh;
                });
    if (replaced[0] != null) {
      replaced[0].markLost(
          LeaseLostEvent.Reason.TAKEN_OVER,
          "the lock was granted anew with fencing token " + granted.fencingToken());
    }
    if (current == fresh) {
      renewer.add(fresh);
    }
    return opened[0];
  }

  /** A grant answered after a newer grant of its lock: ended on the server, never handed out. */
  static final class StaleGrantException extends BackendUnavailableException {
    private static final long serialVersionUID = 1L;

    StaleGrantException(String message) {
      super(message);
    }
  }
}
