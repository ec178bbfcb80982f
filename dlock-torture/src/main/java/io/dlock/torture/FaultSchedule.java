package io.dlock.torture;

import io.dlock.LockException;
import io.dlock.LockInfo;
import io.dlock.PermitInfo;
import io.dlock.testkit.net.TcpProxy;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Injects a run's scenario over and over until the run's end. A fault aimed at a holder lands on
 * the next worker to enter its critical section, while it holds; the probe then contends for its
 * lock. After each fault, the probes are waited for and a lease of calm lets the workers settle.
 */
final class FaultSchedule {
  private final RunSettings settings;
  private final Target target;
  private final FaultLog faults;
  private final RegisterServer registers;
  private final WorkerPool workers;
  private final Probe probe;
  private final WaiterPartition waiterPartition;

  FaultSchedule(
      RunSettings settings,
      Target target,
      FaultLog faults,
      RegisterServer registers,
      WorkerPool workers,
      Probe probe,
      WaiterPartition waiterPartition) {
    this.settings = settings;
    this.target = target;
    this.faults = faults;
    this.registers = registers;
    this.workers = workers;
    this.probe = probe;
    this.waiterPartition = waiterPartition;
  }

  /** Injects faults until {@code end} (on the {@code System.nanoTime} clock). */
  void injectUntil(long end) throws InterruptedException {
    while (System.nanoTime() < end) {
      injectOnce(end);
    }
  }

  private void injectOnce(long end) throws InterruptedException {
    Scenario scenario = settings.scenario();
    switch (scenario) {
      case CALM, CLOCK_OFFSET -> calm(Duration.ofNanos(Math.max(0, end - System.nanoTime())));
      case KILL -> kill();
      case PAUSE, SHORT_PAUSE -> pause(scenario == Scenario.PAUSE);
      case RESTART -> restart();
      case PARTITION -> partition();
      case DELAY -> delay();
      case WAITER_PARTITION -> {
        if (waiterPartition.inject()) {
          afterFault();
        }
      }
      case MEMBER_PARTITION -> memberPartition();
      case FORCE_RELEASE -> forceRelease();
      case CLIENT_CLOSE -> clientClose();
    }
  }

  /** SIGKILL of a holder, replaced by a fresh worker. */
  private void kill() throws InterruptedException {
    Optional<Map.Entry<String, String>> victim = victim();
    if (victim.isEmpty()) {
      return;
    }
    WorkerProcess w = workers.remove(victim.get().getKey());
    w.process().destroyForcibly(); // SIGKILL
    w.process().waitFor(10, TimeUnit.SECONDS);
    faults.injected(Event.Kind.KILL, victim.get().getValue(), 0, w.id());
    w.proxies().forEach(TcpProxy::close);
    contend(victim.get().getValue());
    workers.spawn(0);
    afterFault();
  }

  /** SIGSTOP of a holder, for twice the lease (past it) or a quarter of it, then SIGCONT. */
  private void pause(boolean pastTheLease) throws InterruptedException {
    Optional<Map.Entry<String, String>> victim = victim();
    if (victim.isEmpty()) {
      return;
    }
    Duration lease = settings.lease();
    WorkerProcess w = workers.get(victim.get().getKey());
    Duration pause = pastTheLease ? lease.multipliedBy(2) : lease.dividedBy(4);
    w.signal("STOP");
    faults.injected(Event.Kind.STOP, victim.get().getValue(), 0, w.id());
    if (pastTheLease) {
      contend(victim.get().getValue());
    }
    calm(pause); // the pause itself
    w.signal("CONT");
    faults.append(Event.Kind.CONT, victim.get().getValue(), 0, w.id());
    afterFault();
  }

  private void restart() throws InterruptedException {
    faults.injected(Event.Kind.RESTART_BEGIN, "-", 0, target.restartDescription());
    target.restart();
    faults.append(Event.Kind.RESTART_END, "-", 0, "");
    afterFault();
  }

  /** A holder's connections silenced for twice the lease, then healed. */
  private void partition() throws InterruptedException {
    Optional<Map.Entry<String, String>> victim = victim();
    if (victim.isEmpty()) {
      return;
    }
    WorkerProcess w = workers.get(victim.get().getKey());
    w.proxies().forEach(TcpProxy::cut);
    faults.injected(Event.Kind.CUT_BEGIN, victim.get().getValue(), 0, w.id());
    contend(victim.get().getValue());
    calm(settings.lease().multipliedBy(2)); // the partition itself
    w.proxies().forEach(TcpProxy::heal);
    faults.append(Event.Kind.CUT_END, victim.get().getValue(), 0, w.id());
    afterFault();
  }

  /**
   * Every worker's connections delayed by a tenth of the lease each way, for twice the lease. A
   * round trip beyond the target's per-call bound is logged as an outage ({@link
   * Target#perCallBound}): the token field of both markers says so (1).
   */
  private void delay() throws InterruptedException {
    Duration lease = settings.lease();
    long millis = lease.toMillis() / 10;
    Optional<Duration> bound = target.perCallBound();
    boolean outage = bound.isPresent() && 2 * millis > bound.get().toMillis();
    workers.delay(millis);
    faults.injected(
        Event.Kind.DELAY_BEGIN,
        "-",
        outage ? 1 : 0,
        "all workers "
            + millis
            + " ms each way"
            + (outage
                ? ", beyond the backend's per-call bound of "
                    + bound.get().toMillis()
                    + " ms: an outage"
                : ""));
    calm(lease.multipliedBy(2)); // the delay period itself
    workers.delay(0);
    faults.append(Event.Kind.DELAY_END, "-", outage ? 1 : 0, "");
    afterFault();
  }

  /** One member of the backend cut off from the others for twice the lease, then healed. */
  private void memberPartition() throws InterruptedException {
    String cut = target.cutMember();
    faults.injected(Event.Kind.MEMBER_CUT_BEGIN, "-", 0, cut);
    String healed;
    try {
      calm(settings.lease().multipliedBy(2)); // the partition itself
    } finally {
      healed = target.healMembers();
    }
    faults.append(Event.Kind.MEMBER_CUT_END, "-", 0, healed);
    afterFault();
  }

  /** A held lock deleted on the server, then granted at once to its holder's owner id elsewhere. */
  private void forceRelease() throws InterruptedException {
    Optional<Map.Entry<String, String>> victim = victim();
    if (victim.isEmpty()) {
      return;
    }
    WorkerProcess w = workers.get(victim.get().getKey());
    String lock = victim.get().getValue();
    long token;
    try {
      if (settings.workload() == Workload.SEMAPHORE) {
        // The victim's permit, by the token it entered with: the others' stand.
        long entered = registers.enteredWith(w.id());
        token = probe.forceReleasePermit(lock, entered).map(PermitInfo::fencingToken).orElse(0L);
      } else {
        token = probe.forceRelease(lock).map(LockInfo::fencingToken).orElse(0L);
      }
    } catch (LockException e) {
      faults.append(Event.Kind.FORCE_RELEASE, lock, 0, w.id() + " failed " + e);
      return;
    }
    faults.injected(Event.Kind.FORCE_RELEASE, lock, token, w.id());
    // At once, a grant to the victim's owner id through another client, held for a lease: the
    // victim's late release (or renewal) of its deleted grant must not reach this one, else
    // another owner is granted the lock while the probe holds it. In an election the candidates
    // waiting are the contenders: one of them is elected while the deleted term's leader still
    // believes it leads, until its next renewal tells it TAKEN_OVER.
    if (settings.workload() == Workload.LOCK) {
      probe.contend(lock, w.ownerId(), settings.lease());
    }
    afterFault();
  }

  /**
   * A worker's client closed while it holds a lock and two of its threads wait for it: the next
   * worker to enter its critical section is asked to, and says which lock it holds as it closes.
   * The probe then contends for that lock, as after a kill.
   */
  private void clientClose() throws InterruptedException {
    Optional<Map.Entry<String, String>> victim = victim();
    if (victim.isEmpty()) {
      return;
    }
    WorkerProcess w = workers.get(victim.get().getKey());
    registers.forgetClosing(w.id());
    w.command("close");
    // Within its critical section (or at its next one): the waiters' settling, then the close.
    Optional<String> lock = registers.awaitClosing(w.id(), settings.lease().multipliedBy(5));
    if (lock.isEmpty()) {
      w.command("never-mind"); // no critical section came: no close behind the probe's back
      return;
    }
    faults.injected(Event.Kind.CLIENT_CLOSE, lock.get(), 0, w.id());
    contend(lock.get());
    afterFault();
  }

  /**
   * The probe contends for a faulted holder's lock, so that someone waits when it frees; not in an
   * election, whose other candidates compete all the time (a probe holding the election's lock
   * would be a leader nobody elected), nor for a semaphore, whose workers all take its permits all
   * the time.
   */
  private void contend(String lock) {
    if (settings.workload() == Workload.LOCK) {
      probe.contend(lock);
    }
  }

  /**
   * The next worker to enter its critical section, with the lock it holds: in an election, the
   * leader at its next round of work.
   */
  private Optional<Map.Entry<String, String>> victim() throws InterruptedException {
    return registers.awaitEntry(workers.ids(), settings.lease().multipliedBy(5));
  }

  /**
   * Between faults: wait for the probes, then a lease of calm for the workers to settle. In an
   * election, first for a leader at work (the new one, after a fault on the last; the criteria
   * judge how soon, this wait only keeps the calm after it), then a calm in which its term ends and
   * the next begins, without a fault: the longest term and a renewal interval, if longer than a
   * lease. For a semaphore, the next-grant bound if longer than a lease: the history then reaches
   * past the time by which the victim's permits must be back ({@link PermitReturnCriterion}).
   */
  private void afterFault() throws InterruptedException {
    probe.awaitContenders();
    Duration calm = settings.lease();
    if (settings.workload() == Workload.ELECTION) {
      registers.awaitEntry(
          workers.ids(), target.nextGrantBound(settings.lease()).plus(settings.lease()));
      Duration handOff = Duration.ofMillis(settings.longestTermMillis()).plus(settings.renewal());
      calm = handOff.compareTo(calm) > 0 ? handOff : calm;
    }
    if (settings.workload() == Workload.SEMAPHORE) {
      Duration bound = target.nextGrantBound(settings.lease());
      calm = bound.compareTo(calm) > 0 ? bound : calm;
    }
    calm(calm);
  }

  static void calm(Duration d) throws InterruptedException {
    // Faults are timed on the wall of the run, not synchronized with anything: sleeping is the
    // fault's duration (a pause, a partition) or the calm between faults.
    TimeUnit.NANOSECONDS.sleep(d.toNanos());
  }
}
