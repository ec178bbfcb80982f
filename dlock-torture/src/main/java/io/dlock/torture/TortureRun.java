package io.dlock.torture;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockException;
import io.dlock.LockOptions;
import io.dlock.testkit.net.TcpProxy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Coordinates one run: starts the register server, the worker processes (each behind proxies of its
 * own), injects the scenario's fault over and over, ends the workers, and hands the histories to
 * the {@link Checker}. The backend's servers are the caller's, shared by the runs of a backend.
 */
final class TortureRun {
  private static final long[] CLOCK_OFFSETS_HOURS = {7, -5, 3, -1, 6, -4, 2, -2};

  private final RunSettings settings;
  private final Target target;
  private final Path dir;
  private final EventLog faults;
  private final RegisterServer registers;
  private final Map<String, WorkerProcess> workers = new LinkedHashMap<>();
  private final List<String> lockNames = new ArrayList<>();
  private final List<CompletableFuture<?>> probes = new ArrayList<>();
  private final ExecutorService probeThreads = Executors.newCachedThreadPool();
  private final String jar;
  private int nextWorker = 1;
  private int faultsInjected;

  private record WorkerProcess(
      String id, Process process, List<TcpProxy> proxies, String ownerId) {}

  TortureRun(RunSettings settings, Target target, String jar) {
    this.settings = settings;
    this.target = target;
    this.jar = jar;
    this.dir = settings.directory().resolve(target.name() + "-" + settings.scenario().id());
    try {
      Files.createDirectories(dir);
      try (var old = Files.list(dir)) {
        for (Path p : old.toList()) {
          Files.delete(p);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    this.faults = new EventLog(dir.resolve("faults.history"), "faults");
    this.registers = new RegisterServer(new EventLog(dir.resolve("register.history"), "register"));
    String run = Long.toString(System.nanoTime() % 1_000_000, 36);
    for (int i = 0; i < settings.locks(); i++) {
      lockNames.add("torture-" + settings.scenario().id() + "-" + run + "-" + i);
    }
  }

  RunResult run() throws InterruptedException {
    Scenario scenario = settings.scenario();
    try (LockClient probe = connectProbe()) {
      for (int i = 0; i < settings.workers(); i++) {
        spawnWorker(scenario == Scenario.CLOCK_OFFSET ? CLOCK_OFFSETS_HOURS[i % 8] * 3_600_000 : 0);
      }
      // The run starts once the workers contend: the first critical section entered.
      registers.awaitEntry(List.copyOf(workers.keySet()), Duration.ofSeconds(60));
      faults.append(Event.Kind.RUN_BEGIN, "-", 0, scenario.id());
      long end = System.nanoTime() + settings.duration().toNanos();
      while (System.nanoTime() < end) {
        injectOnce(scenario, probe, end);
      }
      for (CompletableFuture<?> p : probes) {
        p.join();
      }
      faults.append(Event.Kind.RUN_END, "-", 0, scenario.id());
    } finally {
      stopWorkers();
      if (waiter != null) {
        waiter.close();
        waiterProxies.forEach(TcpProxy::close);
      }
      probeProxies.forEach(TcpProxy::close);
      probeThreads.shutdownNow();
      registers.close();
    }
    List<Event> history = EventLog.readAll(dir);
    return new Checker(settings, target.nextGrantBound(settings.lease()), history)
        .check(target.name(), faultsInjected);
  }

  private void injectOnce(Scenario scenario, LockClient probe, long end)
      throws InterruptedException {
    Duration lease = settings.lease();
    switch (scenario) {
      case CALM, CLOCK_OFFSET -> calm(Duration.ofNanos(Math.max(0, end - System.nanoTime())));
      case KILL -> {
        Optional<Map.Entry<String, String>> victim = victim();
        if (victim.isEmpty()) {
          return;
        }
        WorkerProcess w = workers.remove(victim.get().getKey());
        w.process().destroyForcibly(); // SIGKILL
        w.process().waitFor(10, TimeUnit.SECONDS);
        faults.append(Event.Kind.KILL, victim.get().getValue(), 0, w.id());
        faultsInjected++;
        w.proxies().forEach(TcpProxy::close);
        probe(probe, victim.get().getValue());
        spawnWorker(0);
        afterFault();
      }
      case PAUSE, SHORT_PAUSE -> {
        Optional<Map.Entry<String, String>> victim = victim();
        if (victim.isEmpty()) {
          return;
        }
        WorkerProcess w = workers.get(victim.get().getKey());
        Duration pause = scenario == Scenario.PAUSE ? lease.multipliedBy(2) : lease.dividedBy(4);
        signal(w, "STOP");
        faults.append(Event.Kind.STOP, victim.get().getValue(), 0, w.id());
        faultsInjected++;
        if (scenario == Scenario.PAUSE) {
          probe(probe, victim.get().getValue());
        }
        calm(pause); // the pause itself
        signal(w, "CONT");
        faults.append(Event.Kind.CONT, victim.get().getValue(), 0, w.id());
        afterFault();
      }
      case RESTART -> {
        faults.append(Event.Kind.RESTART_BEGIN, "-", 0, target.restartDescription());
        faultsInjected++;
        target.restart();
        faults.append(Event.Kind.RESTART_END, "-", 0, "");
        afterFault();
      }
      case PARTITION -> {
        Optional<Map.Entry<String, String>> victim = victim();
        if (victim.isEmpty()) {
          return;
        }
        WorkerProcess w = workers.get(victim.get().getKey());
        w.proxies().forEach(TcpProxy::cut);
        faults.append(Event.Kind.CUT_BEGIN, victim.get().getValue(), 0, w.id());
        faultsInjected++;
        probe(probe, victim.get().getValue());
        calm(lease.multipliedBy(2)); // the partition itself
        w.proxies().forEach(TcpProxy::heal);
        faults.append(Event.Kind.CUT_END, victim.get().getValue(), 0, w.id());
        afterFault();
      }
      case DELAY -> {
        long millis = lease.toMillis() / 10;
        workers.values().forEach(w -> w.proxies().forEach(p -> p.delay(millis)));
        faults.append(Event.Kind.DELAY_BEGIN, "-", 0, "all workers " + millis + " ms each way");
        faultsInjected++;
        calm(lease.multipliedBy(2)); // the delay period itself
        workers.values().forEach(w -> w.proxies().forEach(p -> p.delay(0)));
        faults.append(Event.Kind.DELAY_END, "-", 0, "");
        afterFault();
      }
      case WAITER_PARTITION -> waiterPartition(probe);
      case MEMBER_PARTITION -> {
        String cut = target.cutMember();
        faults.append(Event.Kind.MEMBER_CUT_BEGIN, "-", 0, cut);
        faultsInjected++;
        String healed;
        try {
          calm(lease.multipliedBy(2)); // the partition itself
        } finally {
          healed = target.healMembers();
        }
        faults.append(Event.Kind.MEMBER_CUT_END, "-", 0, healed);
        afterFault();
      }
      case FORCE_RELEASE -> {
        Optional<Map.Entry<String, String>> victim = victim();
        if (victim.isEmpty()) {
          return;
        }
        WorkerProcess w = workers.get(victim.get().getKey());
        String lock = victim.get().getValue();
        Optional<io.dlock.LockInfo> was;
        try {
          was = probe.forceRelease(lock);
        } catch (LockException e) {
          faults.append(Event.Kind.FORCE_RELEASE, lock, 0, w.id() + " failed " + e);
          return;
        }
        faults.append(
            Event.Kind.FORCE_RELEASE,
            lock,
            was.map(io.dlock.LockInfo::fencingToken).orElse(0L),
            w.id());
        faultsInjected++;
        // At once, a grant to the victim's owner id through another client, held for a lease: the
        // victim's late release (or renewal) of its deleted grant must not reach this one, else
        // another owner is granted the lock while the probe holds it.
        probe(probe, lock, w.ownerId(), lease);
        afterFault();
      }
    }
  }

  private List<TcpProxy> waiterProxies;
  private LockClient waiter;
  private EventLog waiterLog;
  private int waiterLocks;

  /**
   * A client of its own (through proxies of its own) waits for a lock of its own that the probe
   * holds; its path is cut for twice the lease, so that its session (and on ZooKeeper its queue
   * node and watch) ends, then healed. The probe releases the lock during the cut or right after
   * it, in turn. Nobody else wants that lock, so a waiter that is not woken leaves it free while it
   * waits, which the checker bounds.
   */
  private void waiterPartition(LockClient probe) throws InterruptedException {
    Duration lease = settings.lease();
    if (waiter == null) {
      waiterProxies = target.servers().stream().map(TcpProxy::new).toList();
      waiter =
          LockClients.connect(
              target.uri(waiterProxies.stream().map(TcpProxy::port).toList()),
              target.properties(lease),
              LockClientOptions.defaults().withOperationTimeout(Duration.ofSeconds(5)));
      waiterLog = new EventLog(dir.resolve("waiter.history"), "waiter");
    }
    String lock = lockNames.get(0) + "-waited-" + waiterLocks++;
    boolean releaseDuringCut = waiterLocks % 2 == 1;
    LockOptions options = LockOptions.defaults().withRenewedLease(lease);
    EventLog holderLog = probeLog();
    holderLog.append(Event.Kind.ACQUIRING, lock, 0, "");
    Lease held;
    try {
      held = probe.lock(lock, options).acquire(Duration.ofSeconds(10));
    } catch (LockException e) {
      holderLog.append(Event.Kind.NO_GRANT, lock, 0, e.toString());
      return;
    }
    holderLog.append(Event.Kind.GRANT, lock, held.fencingToken(), "");
    Duration wait = lease.multipliedBy(10);
    CompletableFuture<Void> waited =
        CompletableFuture.runAsync(
            () -> {
              waiterLog.append(Event.Kind.ACQUIRING, lock, 0, "");
              Lease got;
              try {
                got = waiter.lock(lock, options).acquire(wait);
              } catch (LockException e) {
                waiterLog.append(Event.Kind.NO_GRANT, lock, 0, e.toString());
                return;
              }
              waiterLog.append(Event.Kind.GRANT, lock, got.fencingToken(), "");
              waiterLog.append(Event.Kind.RELEASING, lock, got.fencingToken(), "");
              String result;
              try {
                result = Boolean.toString(got.release());
              } catch (LockException e) {
                result = "error " + e;
              }
              waiterLog.append(Event.Kind.RELEASED, lock, got.fencingToken(), result);
            },
            probeThreads);
    calm(lease.dividedBy(4)); // time for the waiter to queue: no event says it has
    waiterProxies.forEach(TcpProxy::cut);
    faults.append(Event.Kind.WAITER_CUT_BEGIN, lock, 0, "waiter");
    faultsInjected++;
    if (releaseDuringCut) {
      calm(lease.dividedBy(2));
      release(holderLog, lock, held);
      calm(lease.multipliedBy(2).minus(lease.dividedBy(2)));
    } else {
      calm(lease.multipliedBy(2));
    }
    waiterProxies.forEach(TcpProxy::heal);
    faults.append(Event.Kind.WAITER_CUT_END, lock, 0, "waiter");
    if (!releaseDuringCut) {
      release(holderLog, lock, held);
    }
    try {
      waited.get(wait.plusSeconds(10).toMillis(), TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      waiterLog.append(Event.Kind.NO_GRANT, lock, 0, "the waiter did not return: " + e);
    }
    afterFault();
  }

  private static void release(EventLog log, String lock, Lease held) {
    log.append(Event.Kind.RELEASING, lock, held.fencingToken(), "");
    String result;
    try {
      result = Boolean.toString(held.release());
    } catch (LockException e) {
      result = "error " + e;
    }
    log.append(Event.Kind.RELEASED, lock, held.fencingToken(), result);
  }

  /** The next worker to enter its critical section, with the lock it holds. */
  private Optional<Map.Entry<String, String>> victim() throws InterruptedException {
    return registers.awaitEntry(List.copyOf(workers.keySet()), settings.lease().multipliedBy(5));
  }

  /** Between faults: wait for the probes, then a lease of calm for the workers to settle. */
  private void afterFault() throws InterruptedException {
    for (CompletableFuture<?> p : probes) {
      p.join();
    }
    calm(settings.lease());
  }

  private static void calm(Duration d) throws InterruptedException {
    // Faults are timed on the wall of the run, not synchronized with anything: sleeping is the
    // fault's duration (a pause, a partition) or the calm between faults.
    TimeUnit.NANOSECONDS.sleep(d.toNanos());
  }

  /**
   * Contends for {@code lock} right after a fault hit its holder, so that someone is waiting when
   * the lock becomes free again: the time to the next grant (anyone's) then measures the backend,
   * not the workers' choice of lock.
   */
  private void probe(LockClient probe, String lock) {
    probe(probe, lock, null, Duration.ZERO);
  }

  /** As above, with an owner id (or null) and holding the grant for {@code hold}. */
  private void probe(LockClient probe, String lock, String ownerId, Duration hold) {
    EventLog log = probeLog();
    LockOptions options = LockOptions.defaults().withRenewedLease(settings.lease());
    if (ownerId != null) {
      options = options.withOwnerId(ownerId);
    }
    LockOptions chosen = options;
    Duration wait = target.holdAfterDeath(settings.lease()).plus(Duration.ofSeconds(15));
    probes.add(
        CompletableFuture.runAsync(
            () -> {
              Lease lease;
              log.append(Event.Kind.ACQUIRING, lock, 0, "");
              try {
                lease = probe.lock(lock, chosen).acquire(wait);
              } catch (LockException e) {
                log.append(Event.Kind.NO_GRANT, lock, 0, e.toString());
                return;
              }
              long token = lease.fencingToken();
              log.append(Event.Kind.GRANT, lock, token, ownerId == null ? "" : "owner " + ownerId);
              lease.onLost(
                  event ->
                      log.append(
                          Event.Kind.LOST, lock, token, event.reason() + " " + event.detail()));
              try {
                // The hold's length is part of the fault (a grant others must not overlap).
                TimeUnit.NANOSECONDS.sleep(hold.toNanos());
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              log.append(Event.Kind.RELEASING, lock, lease.fencingToken(), "");
              String result;
              try {
                result = Boolean.toString(lease.release());
              } catch (LockException e) {
                result = "error " + e;
              }
              log.append(Event.Kind.RELEASED, lock, lease.fencingToken(), result);
            },
            probeThreads));
  }

  private EventLog probeLog;

  private EventLog probeLog() {
    if (probeLog == null) {
      probeLog = new EventLog(dir.resolve("probe.history"), "probe");
    }
    return probeLog;
  }

  /** The probe's own proxies, never faulted: a URI names servers by loopback port only. */
  private List<TcpProxy> probeProxies = List.of();

  private LockClient connectProbe() {
    probeProxies = target.servers().stream().map(TcpProxy::new).toList();
    return LockClients.connect(
        target.uri(probeProxies.stream().map(TcpProxy::port).toList()),
        target.properties(settings.lease()),
        LockClientOptions.defaults().withOperationTimeout(Duration.ofSeconds(5)));
  }

  private void spawnWorker(long clockOffsetMillis) {
    int number = nextWorker++;
    String id = "w" + number;
    // Two workers per owner id (w1 and w3 share team-1 with 4 workers); a replacement takes a team
    // by the same rule, so every team keeps members in more than one process.
    String ownerId =
        target.sharedOwnerIds()
            ? "team-" + ((number - 1) % Math.max(1, settings.workers() / 2) + 1)
            : null;
    List<TcpProxy> proxies = new ArrayList<>();
    for (InetSocketAddress server : target.servers()) {
      proxies.add(new TcpProxy(server));
    }
    Map<String, String> args = new LinkedHashMap<>();
    args.put("id", id);
    args.put("uri", target.uri(proxies.stream().map(TcpProxy::port).toList()));
    args.put("locks", String.join(",", lockNames));
    args.put("lease-ms", Long.toString(settings.lease().toMillis()));
    args.put("wait-ms", Long.toString(settings.lease().multipliedBy(3).toMillis()));
    args.put("hold-min-ms", Long.toString(settings.holdMinMillis()));
    args.put("hold-max-ms", Long.toString(settings.holdMaxMillis()));
    if (settings.scenario() == Scenario.PARTITION) {
      // Half the critical sections outlast the lease, so that a holder cut off as it starts one
      // must be told of its loss; the other half end first, and their release must fail.
      args.put("long-hold-percent", "50");
      args.put("long-hold-ms", Long.toString(settings.lease().toMillis() * 3 / 2));
    }
    if (ownerId != null) {
      args.put("owner-id", ownerId);
    }
    args.put("registers", Integer.toString(registers.port()));
    args.put("history", dir.resolve(id + ".history").toString());
    args.put("clock-offset-ms", Long.toString(clockOffsetMillis));
    List<String> command = new ArrayList<>();
    command.add(ProcessHandle.current().info().command().orElse("java"));
    command.addAll(
        List.of(
            "-Xmx128m",
            "-XX:+UseSerialGC",
            "-XX:TieredStopAtLevel=1",
            "-Xlog:cds=off",
            "-Xlog:cds+dynamic=off"));
    command.addAll(classDataSharing());
    command.addAll(List.of("-cp", jar, Worker.class.getName()));
    command.addAll(Worker.args(args, target.properties(settings.lease())));
    try {
      Process p =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve(id + ".log").toFile())
              .start();
      workers.put(id, new WorkerProcess(id, p, proxies, ownerId));
      if (command.stream().anyMatch(c -> c.startsWith("-XX:ArchiveClassesAtExit="))) {
        ARCHIVE_WRITERS.put(target.name(), p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start worker " + id, e);
    }
  }

  /** Per backend: the worker that records the class-data archive, while it has none yet. */
  private static final Map<String, Process> ARCHIVE_WRITERS = new java.util.HashMap<>();

  /**
   * Worker start-up costs more CPU than a short run's contention: the first worker of a backend
   * records the classes it loads in a class-data archive when it exits, and later workers map it
   * (AppCDS), starting about twice as fast. A writer killed before it exits leaves no archive, and
   * the next worker records one instead.
   */
  private List<String> classDataSharing() {
    Path archive = settings.directory().resolve(target.name() + "-worker.jsa");
    if (Files.isRegularFile(archive)) {
      return List.of("-XX:SharedArchiveFile=" + archive);
    }
    Process writer = ARCHIVE_WRITERS.get(target.name());
    if (writer != null && writer.isAlive()) {
      return List.of();
    }
    ARCHIVE_WRITERS.remove(target.name());
    return List.of("-XX:ArchiveClassesAtExit=" + archive);
  }

  private static void signal(WorkerProcess w, String signal) {
    try {
      Process kill =
          new ProcessBuilder("kill", "-" + signal, Long.toString(w.process().pid())).start();
      if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
        throw new IllegalStateException("kill -" + signal + " " + w.id() + " failed");
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  /** Ends every worker: closing its standard input asks it to release and exit. */
  private void stopWorkers() throws InterruptedException {
    for (WorkerProcess w : workers.values()) {
      if (w.process().isAlive()) {
        signal(w, "CONT"); // harmless if it was not stopped
        w.proxies().forEach(TcpProxy::heal);
        try {
          w.process().getOutputStream().close();
        } catch (IOException e) {
          // it is ending anyway
        }
      }
    }
    for (WorkerProcess w : workers.values()) {
      if (!w.process().waitFor(30, TimeUnit.SECONDS)) {
        w.process().destroyForcibly().waitFor();
      }
      w.proxies().forEach(TcpProxy::close);
    }
  }
}
