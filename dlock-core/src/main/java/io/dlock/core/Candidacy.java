package io.dlock.core;

import io.dlock.BackendUnavailableException;
import io.dlock.DistributedLock;
import io.dlock.LeaderElection;
import io.dlock.LeaderTerm;
import io.dlock.LeadershipListener;
import io.dlock.LeadershipListener.Revocation;
import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LeaseState;
import io.dlock.LockClient;
import io.dlock.LockInfo;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A candidacy is a lock recipe: competing is an asynchronous acquisition of the election's lock
 * with a long wait (woken by the backend's release signals, as every waiter), a term is the renewed
 * lease it gets, and its epoch is the grant's fencing token. The lease's loss ends the term
 * (revoked) and the candidate competes again; a suspended session makes the term uncertain.
 *
 * <p>Every notice goes through one serial executor (the client's event thread), in the order the
 * state changed, so the listener sees elected, uncertain, restored, revoked exactly once per
 * change.
 */
final class Candidacy implements LeaderElection {
  private static final Logger log = LoggerFactory.getLogger(Candidacy.class);

  /** One acquisition's wait; a candidate whose wait ends without a term simply competes again. */
  static final Duration COMPETE_WAIT = Duration.ofHours(1);

  /** The pause before competing again after the backend did not answer. */
  static final long RETRY_PAUSE_MILLIS = 1_000;

  private final String name;
  private final DistributedLock lock;
  private final LockClient client;
  private final LeadershipListener listener;
  private final Executor events;
  // Guards the fields below; never held across a backend call or a listener.
  private final ReentrantLock state = new ReentrantLock();
  private boolean joined;
  private boolean closed;
  private @Nullable CompletableFuture<Lease> competing;
  private @Nullable LeaderTerm term;

  Candidacy(
      LockClient client,
      String name,
      LockOptions options,
      LeadershipListener listener,
      Executor events) {
    this.client = client;
    this.name = name;
    this.listener = Objects.requireNonNull(listener, "listener");
    this.events = events;
    checkOptions(options);
    this.lock = client.lock(name, options);
  }

  /** An election's lease must be renewed, and its holder this candidacy alone. */
  static void checkOptions(LockOptions options) {
    Objects.requireNonNull(options, "options");
    if (!options.autoRenew()) {
      throw new IllegalArgumentException(
          "options: an election's lease must be renewed (withRenewedLease), not fixed: a fixed"
              + " lease would end a term while its leader lives");
    }
    if (options.ownerId().isPresent()) {
      throw new IllegalArgumentException(
          "options: an election takes no owner id: candidates sharing one would lead together");
    }
  }

  @Override
  public String name() {
    return name;
  }

  @Override
  public void join() {
    state.lock();
    try {
      if (closed) {
        throw new IllegalStateException("The candidacy in election '" + name + "' is closed");
      }
      joined = true;
    } finally {
      state.unlock();
    }
    compete();
  }

  /** Starts an acquisition unless one runs, a term stands, or the candidate is not competing. */
  private void compete() {
    CompletableFuture<Lease> acquisition;
    state.lock();
    try {
      if (!joined || closed || competing != null || term != null) {
        return;
      }
      try {
        acquisition = lock.acquireAsync(COMPETE_WAIT);
      } catch (IllegalStateException clientClosed) {
        joined = false;
        return;
      }
      competing = acquisition;
    } finally {
      state.unlock();
    }
    acquisition.whenComplete((lease, failure) -> acquired(acquisition, lease, failure));
  }

  private void acquired(
      CompletableFuture<Lease> acquisition, @Nullable Lease lease, @Nullable Throwable failure) {
    LeaderTerm elected = null;
    boolean again = false;
    boolean pause = false;
    state.lock();
    try {
      if (competing == acquisition) {
        competing = null;
      }
      if (lease != null) {
        if (joined && !closed && term == null) {
          elected = new LeaderTerm(name, lease.fencingToken(), lease);
          term = elected;
          // Queued under the state lock: a resign() right after must queue its revocation
          // behind this (found by review: it could come first).
          LeaderTerm started = elected;
          events.execute(() -> listener.elected(started));
        }
      } else {
        Throwable cause = unwrap(failure);
        again = joined && !closed && !(cause instanceof CancellationException);
        pause = cause instanceof BackendUnavailableException;
        if (again && !(cause instanceof io.dlock.LockTimeoutException)) {
          log.debug(
              "Candidacy in election '{}' will compete again: {}", name, String.valueOf(cause));
        }
        if (cause instanceof IllegalStateException) {
          again = false; // the client is closed
        }
      }
    } finally {
      state.unlock();
    }
    if (lease != null && elected == null) {
      release(lease); // resigned or closed while it was granted: give it back
      return;
    }
    if (elected != null) {
      LeaderTerm started = elected;
      // Told (queued) above: a loss already known is told at once by onLost, and comes after.
      hookSession(started);
      lease.onLost(event -> lost(started, event));
      return;
    }
    if (again) {
      if (pause) {
        CompletableFuture.delayedExecutor(RETRY_PAUSE_MILLIS, TimeUnit.MILLISECONDS, events)
            .execute(this::compete);
      } else {
        compete();
      }
    }
  }

  /** Tells the listener of a suspended and restored session, where the backend has sessions. */
  private void hookSession(LeaderTerm started) {
    if (started.lease() instanceof LeaseHandle handle) {
      // What the listener was told of this term: read and written on the event thread only.
      boolean[] toldUncertain = {false};
      Consumer<Boolean> tell =
          suspended -> {
            if (currentTerm() != started || suspended == toldUncertain[0]) {
              return;
            }
            toldUncertain[0] = suspended;
            if (suspended) {
              listener.uncertain(started);
            } else {
              listener.restored(started);
            }
          };
      handle.onSessionChange(tell, events);
      // A suspension before the hook (a term granted while suspended, or suspended before this
      // line) was told to nobody, and its restoration came as a restored without an uncertain
      // (found by review): look at the lease once, behind the hook, on the event thread.
      events.execute(() -> tell.accept(started.lease().state() == LeaseState.UNCERTAIN));
    }
  }

  private @Nullable LeaderTerm currentTerm() {
    state.lock();
    try {
      return term;
    } finally {
      state.unlock();
    }
  }

  private void lost(LeaderTerm ended, LeaseLostEvent event) {
    Revocation reason = revocationOf(event.reason());
    state.lock();
    try {
      if (term != ended) {
        return; // resigned first: told then
      }
      term = null;
      // Queued under the state lock, as elected is: a term that a join() on another thread
      // starts once the lock is free must be told after this one's end.
      events.execute(() -> listener.revoked(ended, reason, event.detail()));
    } finally {
      state.unlock();
    }
    // A lost lease stays the client's (listed by heldLeases, kept in its bookkeeping) until its
    // holder releases it: the release takes it out and drops what the server may still count of
    // it (owner-checked: never a newer term), without waiting (found by dlock-torture's election
    // workload: every term lost to a pause or a forced release was still listed at the end).
    release(ended.lease());
    compete();
  }

  static Revocation revocationOf(LeaseLostEvent.Reason reason) {
    return switch (reason) {
      case TAKEN_OVER -> Revocation.TAKEN_OVER;
      case EXPIRED, LEASE_ENDED -> Revocation.EXPIRED;
      case SESSION_LOST -> Revocation.SESSION_LOST;
      case CLIENT_CLOSED -> Revocation.CLIENT_CLOSED;
    };
  }

  @Override
  public void resign() {
    end(false);
  }

  private void end(boolean close) {
    LeaderTerm ended;
    CompletableFuture<Lease> acquisition;
    state.lock();
    try {
      joined = false;
      closed |= close;
      ended = term;
      term = null;
      acquisition = competing;
      competing = null;
      if (ended != null) {
        // Told before the release, under the state lock: once released, another candidate (of
        // this client too, whose notices share the event thread) may be elected and told, and
        // was told before this revocation, two leaders as the listeners saw it (found by review).
        LeaderTerm resigned = ended;
        events.execute(
            () ->
                listener.revoked(
                    resigned,
                    Revocation.RESIGNED,
                    close ? "the candidacy was closed" : "resigned"));
      }
    } finally {
      state.unlock();
    }
    if (acquisition != null) {
      acquisition.cancel(false); // a grant it gets meanwhile is given back by the acquisition
    }
    if (ended != null) {
      release(ended.lease());
    }
  }

  private void release(Lease lease) {
    try {
      lease.release();
    } catch (RuntimeException e) {
      log.warn(
          "The term of election '{}' (epoch {}) was not released ({}); it ends on the server with"
              + " its lease",
          name,
          lease.fencingToken(),
          e.getMessage());
    }
  }

  @Override
  public boolean isLeader() {
    LeaderTerm now = currentTerm();
    return now != null && now.lease().isValid();
  }

  @Override
  public Optional<LeaderTerm> term() {
    LeaderTerm now = currentTerm();
    return now != null && now.lease().isValid() ? Optional.of(now) : Optional.empty();
  }

  @Override
  public Optional<LockInfo> leader() {
    return client.inspect(name).stream().filter(info -> info.name().equals(name)).findFirst();
  }

  @Override
  public void close() {
    end(true);
  }

  private static @Nullable Throwable unwrap(@Nullable Throwable failure) {
    return failure instanceof CompletionException && failure.getCause() != null
        ? failure.getCause()
        : failure;
  }
}
