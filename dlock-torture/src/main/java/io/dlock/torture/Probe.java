package io.dlock.torture;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockInfo;
import io.dlock.LockOptions;
import io.dlock.PermitInfo;
import io.dlock.testkit.net.TcpProxy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The coordinator's own client, never faulted, which writes its calls to {@code probe.history}: it
 * contends for a faulted holder's lock ({@link #contend}), deletes locks (and permits) for the
 * forced-release fault, holds the lock the waiter of the waiter-partition fault waits for, and in a
 * semaphore run answers the fenced register's question which permits live ({@link PermitFence}).
 *
 * <p>Closing it closes its client; its proxies are closed apart ({@link #closeProxies}), once the
 * workers are stopped.
 */
final class Probe implements AutoCloseable {
  private final RunSettings settings;
  private final Target target;
  private final Path dir;
  private final ExecutorService threads;
  private final List<CompletableFuture<?>> contenders = new ArrayList<>();

  /** The probe's own proxies, never faulted: a URI names servers by loopback port only. */
  private List<TcpProxy> proxies = List.of();

  private LockClient client;
  private EventLog log;

  Probe(RunSettings settings, Target target, Path dir, ExecutorService threads) {
    this.settings = settings;
    this.target = target;
    this.dir = dir;
    this.threads = threads;
  }

  void connect() {
    proxies = target.servers().stream().map(TcpProxy::new).toList();
    client =
        LockClients.connect(
            target.uri(proxies.stream().map(TcpProxy::port).toList()),
            target.properties(settings.lease()),
            LockClientOptions.defaults().withOperationTimeout(Duration.ofSeconds(5)));
  }

  /**
   * Contends for {@code lock} right after a fault hit its holder, so that someone is waiting when
   * the lock becomes free again: the time to the next grant (anyone's) then measures the backend,
   * not the workers' choice of lock.
   */
  void contend(String lock) {
    contend(lock, null, Duration.ZERO);
  }

  /** As above, with an owner id (or null) and holding the grant for {@code hold}. */
  void contend(String lock, String ownerId, Duration hold) {
    EventLog history = log();
    LockOptions options = LockOptions.defaults().withRenewedLease(settings.lease());
    if (ownerId != null) {
      options = options.withOwnerId(ownerId);
    }
    LockOptions chosen = options;
    // The wait outlasts the time the faulted holder may keep the lock, then the next-grant bound
    // and a lease more: a lock granted to nobody by then fails the run (NextGrantCriterion), and
    // a lock left free that long while the probe waits fails it too (StuckLockCriterion counts a
    // waiter's free time only from the holder's end, so the wait must reach past the bound).
    Duration leaseLength = settings.lease();
    Duration wait =
        target
            .holdAfterDeath(leaseLength)
            .plus(target.nextGrantBound(leaseLength))
            .plus(leaseLength);
    contenders.add(
        CompletableFuture.runAsync(
            () -> {
              Optional<Lease> granted =
                  RecordedCalls.acquire(
                      history,
                      client,
                      lock,
                      chosen,
                      wait,
                      ownerId == null ? "" : "owner " + ownerId);
              if (granted.isEmpty()) {
                return;
              }
              Lease lease = granted.get();
              long token = lease.fencingToken();
              lease.onLost(
                  event ->
                      history.append(
                          Event.Kind.LOST, lock, token, event.reason() + " " + event.detail()));
              try {
                // The hold's length is part of the fault (a grant others must not overlap).
                TimeUnit.NANOSECONDS.sleep(hold.toNanos());
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              RecordedCalls.release(history, lock, lease);
            },
            threads));
  }

  /** Waits until every contention so far has ended, granted and released or not granted. */
  void awaitContenders() {
    for (CompletableFuture<?> c : contenders) {
      c.join();
    }
  }

  /** Holds {@code lock} for a waiter to wait on; empty if it was not granted. */
  Optional<Lease> hold(String lock, LockOptions options, Duration wait) {
    return RecordedCalls.acquire(log(), client, lock, options, wait, "");
  }

  void release(String lock, Lease held) {
    RecordedCalls.release(log(), lock, held);
  }

  /** Deletes {@code lock} on the server whoever holds it, as an administrator breaks a lock. */
  Optional<LockInfo> forceRelease(String lock) {
    return client.forceRelease(lock);
  }

  /** The tokens of the grants of {@code semaphore}'s permits the backend lists now. */
  Set<Long> permitTokens(String semaphore) {
    return client.semaphore(semaphore, settings.permits()).holders().stream()
        .map(PermitInfo::fencingToken)
        .collect(Collectors.toSet());
  }

  /** Deletes the grant of {@code semaphore}'s permits with {@code token}, whoever holds it. */
  Optional<PermitInfo> forceReleasePermit(String semaphore, long token) {
    return client.semaphore(semaphore, settings.permits()).forceRelease(token);
  }

  private EventLog log() {
    if (log == null) {
      log = new EventLog(dir.resolve("probe.history"), "probe");
    }
    return log;
  }

  @Override
  public void close() {
    if (client != null) {
      client.close();
    }
  }

  void closeProxies() {
    proxies.forEach(TcpProxy::close);
  }
}
