package io.dlock.zookeeper;

import io.dlock.spi.BackendEvents;
import io.dlock.spi.ReleaseListener;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.framework.state.ConnectionStateListener;
import org.jspecify.annotations.Nullable;

/**
 * The backend's view of its connection and session, as a Curator recipe leaves connections to the
 * framework and only listens to their changes: it listens to Curator's connection states, keeps the
 * session id, opens and closes the {@link ConnectionGate}, and reports to the core through {@link
 * BackendEvents}. SUSPENDED makes leases uncertain, RECONNECTED with the same session makes them
 * valid again, LOST (session expired, or Curator's simulated loss after the session timeout) loses
 * them all, and so does a RECONNECTED with a new session that no LOST preceded.
 *
 * <p>A waiter's predecessor watch dies with its session, so waiters are woken on session loss and
 * on a new session and queue again ({@link WaiterWakeUps}). Waits whose clean-up failed for want of
 * a connection are cleaned up once the same session is back.
 *
 * <p>The gate is created by the backend's wiring (the ordered calls wait on it); only this class
 * opens, closes and shuts it.
 */
final class ZooKeeperSession {
  private final CuratorFramework client;
  private final QueueNodes nodes;
  private final ConnectionGate gate;
  private final String description;
  private final QueueEntries entries;
  private final JoinedHolds joinedHolds;
  private final WaiterWakeUps wakeUps;
  private final Map<String, ReleaseListener> listeners;
  private final ConnectionStateListener connectionListener = this::onConnectionState;

  /** Waits whose clean-up failed for want of a connection: retried on reconnection. */
  private final DeferredCleanups abandonAfterReconnect;

  private volatile @Nullable BackendEvents events;
  private volatile long sessionId;

  /**
   * A LOST was applied since {@link #sessionId} was last set: the new session that follows is
   * already accounted for, and reporting its loss again would undo the grants of the waiters woken
   * by the first report, whose calls waited for the new session.
   */
  private volatile boolean lossApplied;

  /**
   * @param gate the gate the backend's calls wait at; opened and closed only here
   * @param description the ensemble and root, for messages
   * @param wakeUps the waiting owners, woken when their watches died with a session
   * @param listeners the release listeners per lock, through which waiters are woken
   * @param retryAbandon cleans up a wait again once the same session is back
   */
  ZooKeeperSession(
      CuratorFramework client,
      QueueNodes nodes,
      ConnectionGate gate,
      String description,
      QueueEntries entries,
      JoinedHolds joinedHolds,
      WaiterWakeUps wakeUps,
      Map<String, ReleaseListener> listeners,
      Consumer<LockAndOwner> retryAbandon) {
    this.client = client;
    this.nodes = nodes;
    this.gate = gate;
    this.description = description;
    this.entries = entries;
    this.joinedHolds = joinedHolds;
    this.wakeUps = wakeUps;
    this.listeners = listeners;
    this.abandonAfterReconnect = new DeferredCleanups(retryAbandon);
  }

  private final java.util.concurrent.atomic.AtomicBoolean started =
      new java.util.concurrent.atomic.AtomicBoolean();

  /**
   * Applies one connection change at a time, and start()'s own look at the connection before any: a
   * LOST delivered while start() looked could otherwise be applied first, and start() then opened
   * the gate for a session already lost, before its RECONNECTED was applied.
   */
  private final ReentrantLock stateChanges = new ReentrantLock();

  /** Starts listening to the connection; called once the backend's parts are all wired. */
  void start() {
    if (!started.compareAndSet(false, true)) {
      throw new IllegalStateException("the ZooKeeper session handling was started already");
    }
    stateChanges.lock();
    try {
      sessionId = nodes.currentSessionId();
      client.getConnectionStateListenable().addListener(connectionListener);
      // After the listener is added: a client that connects after this check reports CONNECTED
      // to the listener, which opens the gate; one connected before it is seen connected here.
      // Changes reported meanwhile wait for this look and are applied after it, in order.
      if (client.getZookeeperClient().isConnected()) {
        sessionId = nodes.currentSessionId();
        gate.open();
      }
    } finally {
      stateChanges.unlock();
    }
  }

  void bindEvents(BackendEvents events) {
    this.events = events;
  }

  /** Where connection and lease events go, or null before the core bound them. */
  @Nullable BackendEvents events() {
    return events;
  }

  /**
   * The clean-ups of waits that failed for want of a connection, retried once the same session is
   * back (see {@link DeferredCleanups} for the generation a clean-up notes before it starts).
   */
  DeferredCleanups abandonAfterReconnect() {
    return abandonAfterReconnect;
  }

  /**
   * Applies a connection change, then lets the calls waiting for a connection go (the gate opens
   * only after the change is applied, so no call runs against a session that already ended), and
   * wakes waiters whose watches a session change killed. Package-private so that tests can apply a
   * change at a chosen moment of a call.
   */
  void onConnectionState(CuratorFramework c, ConnectionState state) {
    stateChanges.lock();
    try {
      applyConnectionState(state);
    } finally {
      stateChanges.unlock();
    }
  }

  private void applyConnectionState(ConnectionState state) {
    BackendEvents sink = events;
    switch (state) {
      case CONNECTED:
        sessionId = nodes.currentSessionId();
        lossApplied = false;
        gate.open();
        joinedHolds.takeBackLeftHolds();
        break;
      case SUSPENDED:
        gate.close();
        if (sink != null) {
          sink.connectionSuspended("ZooKeeper connection to " + description + " suspended");
        }
        break;
      case RECONNECTED:
        long now = nodes.currentSessionId();
        if (now != sessionId) {
          sessionId = now;
          String detail = "reconnected with a new session: the old one expired";
          if (!lossApplied) {
            // No LOST came first (Curator does not always report one): the change is a loss.
            sessionLost(detail, sink);
          }
          lossApplied = false;
          if (sink != null) {
            // The connection is back: grants made in the new session must not start uncertain
            // because of the suspension that preceded the loss (the lost ones stay lost).
            sink.connectionRestored();
          }
          gate.open();
          joinedHolds.takeBackLeftHolds();
          wakeUps.wakeAll(listeners, detail);
        } else {
          lossApplied = false;
          abandonAfterReconnect.reconnected();
          if (sink != null) {
            sink.connectionRestored();
          }
          gate.open();
        }
        break;
      case LOST:
        gate.close(); // until the new session's RECONNECTED is applied
        String detail =
            "ZooKeeper session lost (expired, or no connection within the session timeout)";
        sessionLost(detail, sink);
        lossApplied = true;
        // The waiters' watches died with the session: wake them now. Their new attempts wait at
        // the gate for the new session (within the caller's bound).
        wakeUps.wakeAll(listeners, detail);
        break;
      default:
        break;
    }
  }

  private void sessionLost(String detail, @Nullable BackendEvents sink) {
    abandonAfterReconnect.sessionLost();
    entries.forgetSession();
    if (sink != null) {
      sink.sessionLost(detail);
    }
  }

  /** The backend is closing: stops listening, and fails the calls waiting for a connection. */
  void close() {
    client.getConnectionStateListenable().removeListener(connectionListener);
    gate.shutdown();
  }
}
