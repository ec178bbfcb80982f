package io.dlock.jdbc;

import io.dlock.BackendUnavailableException;
import io.dlock.spi.DriverThreads;
import io.dlock.spi.ReleaseListener;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import java.util.function.Function;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * PostgreSQL release signals: one connection per client, taken from the data source when the first
 * waiter watches and kept, runs {@code LISTEN} on the table's channel; every release sends {@code
 * NOTIFY} with the lock name in the same statement, so waiters wake on commit instead of polling.
 *
 * <p>If the listening connection breaks, every watcher is woken (a release may have been missed
 * meanwhile, so each waiter tries again) and the connection is re-opened after a short pause.
 */
final class PostgresReleaseSignals implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(PostgresReleaseSignals.class);
  private static final int POLL_MILLIS = 250;
  private static final long RECONNECT_PAUSE_MILLIS = 500;
  private static final int UNLISTEN_TIMEOUT_SECONDS = 2;

  private final DataSource dataSource;
  private final String channel;
  private final Function<String, @Nullable ReleaseListener> listeners;
  private final Runnable wakeAll;
  private final Consumer<Connection> discard;
  private final String threadName;
  private final int networkTimeoutMillis;
  private final AtomicReference<CompletableFuture<Void>> ready =
      new AtomicReference<>(new CompletableFuture<>());
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition closing = lock.newCondition();
  private volatile boolean closed;
  private boolean listenedBefore; // only the listening thread reads and writes it
  private @Nullable Thread thread;

  PostgresReleaseSignals(
      DataSource dataSource,
      String channel,
      Function<String, @Nullable ReleaseListener> listeners,
      Runnable wakeAll,
      Consumer<Connection> discard,
      String threadName,
      int networkTimeoutMillis) {
    this.dataSource = dataSource;
    this.channel = channel;
    this.listeners = listeners;
    this.wakeAll = wakeAll;
    this.discard = discard;
    this.threadName = threadName;
    this.networkTimeoutMillis = networkTimeoutMillis;
  }

  /** Completes once {@code LISTEN} is in place, so that no later release can be missed. */
  CompletableFuture<Void> ready() {
    lock.lock();
    try {
      if (closed) {
        return CompletableFuture.failedFuture(
            new BackendUnavailableException("the JDBC lock backend is closed"));
      }
      if (thread == null) {
        Thread t = DriverThreads.daemon(threadName).newThread(this::run);
        thread = t;
        t.start();
      }
    } finally {
      lock.unlock();
    }
    return ready.get();
  }

  private void run() {
    while (!closed) {
      try (Connection c = dataSource.getConnection()) {
        // LISTEN on a silent network gives up, with the connection, instead of keeping this thread
        // (the polls for notifications have their own, shorter, timeout).
        int poolNetworkTimeout = SocketTimeouts.bound(c, networkTimeoutMillis);
        try {
          listen(c);
        } finally {
          unlisten(c, poolNetworkTimeout);
        }
      } catch (SQLException | RuntimeException e) {
        if (closed) {
          return;
        }
        log.warn("PostgreSQL release signals interrupted, reconnecting: {}", e.toString());
        CompletableFuture<Void> current = ready.get();
        if (current.isDone() && !current.isCompletedExceptionally()) {
          ready.compareAndSet(current, new CompletableFuture<>());
        } else {
          ready.compareAndSet(current, new CompletableFuture<>());
          current.completeExceptionally(
              new BackendUnavailableException(
                  "cannot listen for releases on PostgreSQL: " + e.getMessage(), e));
        }
        wakeAll.run();
        pause();
      }
    }
  }

  /** Listens on {@code c} and passes the notifications on, until closed or {@code c} fails. */
  private void listen(Connection c) throws SQLException {
    if (!c.getAutoCommit()) {
      c.setAutoCommit(true); // LISTEN takes effect at commit
    }
    PGConnection pg = c.unwrap(PGConnection.class);
    try (Statement st = c.createStatement()) {
      st.execute("LISTEN \"" + channel + "\"");
    }
    if (listenedBefore) {
      wakeAll.run(); // releases during the gap were not heard: let every waiter try again
    }
    listenedBefore = true;
    ready.get().complete(null);
    while (!closed) {
      PGNotification[] notifications = pg.getNotifications(POLL_MILLIS);
      if (notifications == null) {
        continue;
      }
      for (PGNotification n : notifications) {
        ReleaseListener listener = listeners.apply(n.getParameter());
        if (listener != null) {
          listener.released(null);
        }
      }
    }
  }

  /**
   * Stops listening before the connection goes back to the pool: a pooled connection still
   * listening would collect notifications that nobody reads (the server queues them for it, and the
   * application that borrows it next gets them), and would keep this client's channel alive. A
   * connection that cannot even do that is closed physically, so that the pool never hands it out
   * again.
   */
  private void unlisten(Connection c, int poolNetworkTimeout) {
    try (Statement st = c.createStatement()) {
      // A silent network must not keep this thread: the socket read gives up, the connection goes.
      SocketTimeouts.bound(c, UNLISTEN_TIMEOUT_SECONDS * 1000);
      st.setQueryTimeout(UNLISTEN_TIMEOUT_SECONDS);
      st.execute("UNLISTEN \"" + channel + "\"");
      SocketTimeouts.restore(c, poolNetworkTimeout);
    } catch (SQLException | RuntimeException e) {
      log.debug("UNLISTEN failed, discarding the connection: {}", e.toString());
      discard.accept(c);
    }
  }

  private void pause() {
    lock.lock();
    try {
      if (!closed) {
        closing.await(RECONNECT_PAUSE_MILLIS, TimeUnit.MILLISECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      closed = true;
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void close() {
    Thread t;
    lock.lock();
    try {
      closed = true;
      closing.signalAll();
      t = thread;
    } finally {
      lock.unlock();
    }
    ready.get().completeExceptionally(new BackendUnavailableException("backend closed"));
    if (t != null) {
      try {
        t.join(POLL_MILLIS * 4L);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
