package io.dlock.torture;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockOptions;
import io.dlock.testkit.net.TcpProxy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The waiter-partition fault. A client of its own (through proxies of its own) waits for a lock of
 * its own that the probe holds; its path is cut for twice the lease, so that its session (and on
 * ZooKeeper its queue node and watch) ends, then healed. The probe releases the lock during the cut
 * or right after it, in turn. Nobody else wants that lock, so a waiter that is not woken leaves it
 * free while it waits, which the checker bounds.
 */
final class WaiterPartition {
  private final RunSettings settings;
  private final Target target;
  private final Path dir;
  private final String lockPrefix;
  private final Probe probe;
  private final FaultLog faults;
  private final ExecutorService threads;

  // The waiter's client, connected at the first fault and kept for the run.
  private List<TcpProxy> proxies;
  private LockClient waiter;
  private EventLog log;
  private int locks;

  /** Waits for locks named after {@code lockPrefix}, each fault its own. */
  WaiterPartition(
      RunSettings settings,
      Target target,
      Path dir,
      String lockPrefix,
      Probe probe,
      FaultLog faults,
      ExecutorService threads) {
    this.settings = settings;
    this.target = target;
    this.dir = dir;
    this.lockPrefix = lockPrefix;
    this.probe = probe;
    this.faults = faults;
    this.threads = threads;
  }

  /**
   * Injects the fault once and waits for the waiter's answer; returns false, having injected
   * nothing, if the probe was not granted the lock to begin with.
   */
  boolean inject() throws InterruptedException {
    Duration lease = settings.lease();
    if (waiter == null) {
      proxies = target.servers().stream().map(TcpProxy::new).toList();
      waiter =
          LockClients.connect(
              target.uri(proxies.stream().map(TcpProxy::port).toList()),
              target.properties(lease),
              LockClientOptions.defaults().withOperationTimeout(Duration.ofSeconds(5)));
      log = new EventLog(dir.resolve("waiter.history"), "waiter");
    }
    String lock = lockPrefix + "-waited-" + locks++;
    boolean releaseDuringCut = locks % 2 == 1;
    LockOptions options = LockOptions.defaults().withRenewedLease(lease);
    Optional<Lease> holding = probe.hold(lock, options, Duration.ofSeconds(10));
    if (holding.isEmpty()) {
      return false;
    }
    Lease held = holding.get();
    Duration wait = lease.multipliedBy(10);
    CompletableFuture<Void> waited =
        CompletableFuture.runAsync(
            () ->
                RecordedCalls.acquire(log, waiter, lock, options, wait, "")
                    .ifPresent(got -> RecordedCalls.release(log, lock, got)),
            threads);
    FaultSchedule.calm(lease.dividedBy(4)); // time for the waiter to queue: no event says it has
    proxies.forEach(TcpProxy::cut);
    faults.injected(Event.Kind.WAITER_CUT_BEGIN, lock, 0, "waiter");
    if (releaseDuringCut) {
      FaultSchedule.calm(lease.dividedBy(2));
      probe.release(lock, held);
      FaultSchedule.calm(lease.multipliedBy(2).minus(lease.dividedBy(2)));
    } else {
      FaultSchedule.calm(lease.multipliedBy(2));
    }
    proxies.forEach(TcpProxy::heal);
    faults.append(Event.Kind.WAITER_CUT_END, lock, 0, "waiter");
    if (!releaseDuringCut) {
      probe.release(lock, held);
    }
    try {
      waited.get(wait.plusSeconds(10).toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException | TimeoutException e) {
      log.append(Event.Kind.NO_GRANT, lock, 0, "the waiter did not return: " + e);
    }
    return true;
  }

  /** Closes the waiter's client, then its proxies, if a fault connected them. */
  void close() {
    if (waiter != null) {
      waiter.close();
      proxies.forEach(TcpProxy::close);
    }
  }
}
