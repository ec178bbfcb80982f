package io.dlock.spring.election;

import io.dlock.LeaderElection;
import io.dlock.LeaderTerm;
import io.dlock.LeadershipListener;
import io.dlock.LeadershipListener.Revocation;
import io.dlock.LeaseState;
import io.dlock.LockClient;
import io.dlock.LockInfo;
import io.dlock.LockOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.context.SmartLifecycle;

/**
 * The application's candidacy in the starter's leader election ({@code dlock.election.name}),
 * joined when the application context starts and resigned when it stops, which publishes each
 * change of leadership as a Spring application event ({@link LeadershipEvent}): beans start
 * leader-only work on {@link LeadershipGranted} and stop it on {@link LeadershipRevoked}. {@link
 * io.dlock.spring.LeaderOnly} methods ask it whether this instance leads.
 *
 * <p>A {@link LeadershipRevoked} is published for every {@link LeadershipGranted}, and none without
 * one. When the context stops, the election resigns (ending the term at once, so another instance
 * takes over without waiting for the lease to run out) and the context's shutdown waits until the
 * {@link LeadershipRevoked} was published, before any bean is destroyed. A term granted while the
 * context is stopped is given back without an event. The events are published on a thread of this
 * election, one at a time and in order, so that a slow listener delays only them, never the lock
 * client's other notices (a lost lease of a {@code @Locked} method).
 *
 * <p>Started last and stopped first ({@link SmartLifecycle#DEFAULT_PHASE}); closed (for good) with
 * the context, before its lock client.
 */
public final class DlockLeaderElection implements LeaderElection, SmartLifecycle {
  private static final Logger log = LoggerFactory.getLogger(DlockLeaderElection.class);

  private final LeaderElection candidacy;
  private final ApplicationEventPublisher publisher;
  private final ExecutorService events;
  // Guards the fields below; never held while an event is published.
  private final ReentrantLock state = new ReentrantLock();
  private boolean running;
  private boolean closed;
  // The term whose LeadershipGranted was published and whose LeadershipRevoked was not yet.
  private @Nullable LeaderTerm told;
  // Shutdown callbacks waiting for that LeadershipRevoked.
  private final List<Runnable> whenRevoked = new ArrayList<>();

  /**
   * A candidacy of {@code client} in the election {@code name}, not competing until {@link
   * #start()}.
   *
   * @throws IllegalArgumentException if the name is invalid or the lease is fixed
   */
  public DlockLeaderElection(
      LockClient client, String name, LockOptions options, ApplicationEventPublisher publisher) {
    this.publisher = publisher;
    this.candidacy = client.election(name, options, new Publisher());
    this.events =
        Executors.newSingleThreadExecutor(
            runnable -> {
              Thread thread = new Thread(runnable, "dlock-election-" + name);
              thread.setDaemon(true);
              return thread;
            });
  }

  /** Joins the election: this instance competes from now on. */
  @Override
  public void start() {
    state.lock();
    try {
      running = true;
    } finally {
      state.unlock();
    }
    candidacy.join();
  }

  /**
   * Resigns (ending a term at once) and calls {@code callback} once the term's {@link
   * LeadershipRevoked} was published, or at once if this instance did not lead.
   */
  @Override
  public void stop(Runnable callback) {
    state.lock();
    try {
      running = false; // a term granted from now on is given back without an event
    } finally {
      state.unlock();
    }
    try {
      candidacy.resign(); // its revocation is told after every notice before it
    } catch (RuntimeException e) {
      log.warn("Election '{}': resigning failed: {}", candidacy.name(), e.toString());
    }
    boolean now;
    state.lock();
    try {
      now = told == null;
      if (!now) {
        whenRevoked.add(callback);
      }
    } finally {
      state.unlock();
    }
    if (now) {
      callback.run();
    }
  }

  /** Resigns; the {@link LeadershipRevoked} may be published after this returns. */
  @Override
  public void stop() {
    stop(() -> {});
  }

  @Override
  public boolean isRunning() {
    state.lock();
    try {
      return running;
    } finally {
      state.unlock();
    }
  }

  @Override
  public int getPhase() {
    return DEFAULT_PHASE;
  }

  @Override
  public String name() {
    return candidacy.name();
  }

  @Override
  public void join() {
    candidacy.join();
  }

  @Override
  public void resign() {
    candidacy.resign();
  }

  @Override
  public boolean isLeader() {
    return candidacy.isLeader();
  }

  @Override
  public Optional<LeaderTerm> term() {
    return candidacy.term();
  }

  @Override
  public Optional<LockInfo> leader() {
    return candidacy.leader();
  }

  /** Resigns for good; events not yet published are dropped (the context's beans are going). */
  @Override
  public void close() {
    state.lock();
    try {
      running = false;
      closed = true;
    } finally {
      state.unlock();
    }
    try {
      candidacy.close();
    } finally {
      events.shutdown();
    }
  }

  private void granted(LeaderTerm term) {
    LeaseState lease = term.lease().state();
    state.lock();
    try {
      if (!running || closed || lease == LeaseState.RELEASED || lease == LeaseState.LOST) {
        // Stopped, or the term is over already (a resign that raced the grant can even be told
        // before it): no event, and none for its revocation either.
        return;
      }
      told = term;
    } finally {
      state.unlock();
    }
    log.info("Leading election '{}' (epoch {})", term.election(), term.epoch());
    publish(new LeadershipGranted(term));
  }

  private void changed(LeadershipEvent event) {
    if (!isTold(event.term())) {
      return;
    }
    if (event instanceof LeadershipUncertain) {
      log.warn(
          "Election '{}' (epoch {}): the connection is suspended, the term is uncertain",
          event.term().election(),
          event.epoch());
    } else {
      log.info(
          "Election '{}' (epoch {}): the connection is back, the term stands",
          event.term().election(),
          event.epoch());
    }
    publish(event);
  }

  private void revoked(LeadershipRevoked event) {
    if (!isTold(event.term())) {
      return;
    }
    boolean voluntary =
        event.reason() == Revocation.RESIGNED || event.reason() == Revocation.CLIENT_CLOSED;
    String message = "Stopped leading election '{}' (epoch {}): {} ({})";
    Object[] args = {event.term().election(), event.epoch(), event.reason(), event.detail()};
    if (voluntary) {
      log.info(message, args);
    } else {
      log.warn(message, args);
    }
    publish(event);
    List<Runnable> callbacks;
    state.lock();
    try {
      told = null;
      callbacks = new ArrayList<>(whenRevoked);
      whenRevoked.clear();
    } finally {
      state.unlock();
    }
    callbacks.forEach(Runnable::run);
  }

  private boolean isTold(LeaderTerm term) {
    state.lock();
    try {
      return told == term;
    } finally {
      state.unlock();
    }
  }

  private void publish(LeadershipEvent event) {
    state.lock();
    try {
      if (closed) {
        log.debug("Not published, the election is closed: {}", event);
        return;
      }
    } finally {
      state.unlock();
    }
    try {
      publisher.publishEvent(event);
    } catch (RuntimeException e) {
      log.error("A listener of {} failed", event.getClass().getSimpleName(), e);
    }
  }

  /** Takes the candidacy's notices off the client's event thread, onto the election's own. */
  private final class Publisher implements LeadershipListener {
    @Override
    public void elected(LeaderTerm term) {
      later(() -> granted(term));
    }

    @Override
    public void uncertain(LeaderTerm term) {
      later(() -> changed(new LeadershipUncertain(term)));
    }

    @Override
    public void restored(LeaderTerm term) {
      later(() -> changed(new LeadershipRestored(term)));
    }

    @Override
    public void revoked(LeaderTerm term, Revocation reason, String detail) {
      later(() -> DlockLeaderElection.this.revoked(new LeadershipRevoked(term, reason, detail)));
    }

    private void later(Runnable task) {
      try {
        events.execute(task);
      } catch (RejectedExecutionException closedAlready) {
        log.debug("Election '{}' is closed: a notice is dropped", candidacy.name());
      }
    }
  }
}
