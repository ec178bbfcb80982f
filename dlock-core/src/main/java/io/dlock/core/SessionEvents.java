package io.dlock.core;

import io.dlock.LeaseLostEvent;
import io.dlock.spi.BackendEvents;
import io.dlock.spi.LockOwner;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Applies a backend's session events to the grants of one client, including grants whose request
 * was in flight when the event came.
 *
 * <p>Why requests in flight matter: a backend may answer "granted" for a request it sent before the
 * connection was suspended or the session was lost, and the core registers that grant only after
 * the answer. An event that arrives between the backend's grant and the registration finds no grant
 * to apply to; without this class the lease would read VALID while disconnected, or with no
 * ZooKeeper node behind it. So every acquisition request is recorded here before it is sent, events
 * are applied to the recorded requests as well as to registered grants, and a registration applies
 * whatever its request saw. The lock that orders events against registrations never covers I/O:
 * events and registrations only change in-memory state.
 */
final class SessionEvents implements BackendEvents {
  private static final Logger log = LoggerFactory.getLogger(SessionEvents.class);

  private final String backendName;
  private final Collection<Grant> grants;
  private final ReentrantLock lock = new ReentrantLock();

  /** Requests sent and not yet registered or ended; guarded by {@link #lock}. */
  private final Set<Request> inFlight = new HashSet<>();

  /** Whether the connection is suspended now; guarded by {@link #lock}. */
  private boolean suspended;

  /**
   * @param grants the client's registered grants, a live view
   */
  SessionEvents(String backendName, Collection<Grant> grants) {
    this.backendName = backendName;
    this.grants = grants;
  }

  /** One acquisition request between its sending and its registration. */
  static final class Request {
    private final String lockName;
    private final String ownerKey;
    private boolean suspended;
    private @Nullable String lostDetail;

    private Request(String lockName, String ownerKey, boolean suspended) {
      this.lockName = lockName;
      this.ownerKey = ownerKey;
      this.suspended = suspended;
    }
  }

  /** Records a request about to be sent; every event from now on reaches it. */
  Request sending(String lockName, LockOwner owner) {
    lock.lock();
    try {
      Request request = new Request(lockName, owner.key(), suspended);
      inFlight.add(request);
      return request;
    } finally {
      lock.unlock();
    }
  }

  /** The request ended without a grant to register (held, failed, or given up). */
  void ended(Request request) {
    lock.lock();
    try {
      inFlight.remove(request);
    } finally {
      lock.unlock();
    }
  }

  /**
   * The request's grant is registered (visible in the client's grants, so later events reach it
   * directly): applies what happened to the session since the request was sent.
   *
   * @return false if the session was lost meanwhile: the grant is marked lost, and may belong to a
   *     session that no longer exists
   */
  boolean registered(Request request, Grant grant) {
    lock.lock();
    try {
      inFlight.remove(request);
      if (request.lostDetail != null) {
        grant.markLost(
            LeaseLostEvent.Reason.SESSION_LOST,
            "the session changed while the request was in flight: " + request.lostDetail);
        return false;
      }
      if (request.suspended) {
        grant.suspend();
      }
      return true;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void leaseLost(String lockName, String ownerKey, String detail) {
    lock.lock();
    try {
      for (Grant grant : grants) {
        if (names(grant.lockName(), lockName) && grant.owner().key().equals(ownerKey)) {
          grant.markLost(LeaseLostEvent.Reason.SESSION_LOST, detail);
        }
      }
      for (Request request : inFlight) {
        if (names(request.lockName, lockName) && request.ownerKey.equals(ownerKey)) {
          request.lostDetail = detail;
        }
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Whether a backend's {@code reported} name is the grant's: the lock's name, or for a permit its
   * semaphore's (a backend knows semaphores, not the core's grant names; the owner key, fresh per
   * permit, tells which permit).
   */
  private static boolean names(String grantName, String reported) {
    return grantName.equals(reported)
        || (PermitGrantName.isPermit(grantName)
            && PermitGrantName.displayName(grantName).equals(reported));
  }

  @Override
  public void connectionSuspended(String detail) {
    log.warn("The {} backend's connection is suspended: {}", backendName, detail);
    lock.lock();
    try {
      suspended = true;
      grants.forEach(Grant::suspend);
      inFlight.forEach(request -> request.suspended = true);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void connectionRestored() {
    lock.lock();
    try {
      suspended = false;
      grants.forEach(Grant::restore);
      inFlight.forEach(request -> request.suspended = false);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void sessionLost(String detail) {
    lock.lock();
    try {
      for (Grant grant : grants) {
        grant.markLost(LeaseLostEvent.Reason.SESSION_LOST, detail);
      }
      inFlight.forEach(request -> request.lostDetail = detail);
    } finally {
      lock.unlock();
    }
  }
}
