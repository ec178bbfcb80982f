package io.dlock.torture;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * One run, from start to verdict: starts the register server, the probe and the worker processes
 * (lock workers, the candidates of one election, or the permit takers of one semaphore), lets the
 * {@link FaultSchedule} inject the scenario's fault over and over, ends the workers, and hands the
 * histories to the {@link Checker}. The backend's servers are the caller's, shared by the runs of a
 * backend.
 */
final class TortureRun {
  private static final long[] CLOCK_OFFSETS_HOURS = {7, -5, 3, -1, 6, -4, 2, -2};

  private final RunSettings settings;
  private final Target target;
  private final Path dir;
  private final FaultLog faults;
  private final RegisterServer registers;

  /** The threads of the coordinator's own clients: the probe's contenders and the waiter. */
  private final ExecutorService clientThreads = Executors.newCachedThreadPool();

  // A semaphore run's fence asks the backend every PermitFence.POLL_EVERY (PermitReturnCriterion).
  private final java.util.concurrent.ScheduledExecutorService fencePolls =
      Executors.newSingleThreadScheduledExecutor();

  private final WorkerPool workers;
  private final Probe probe;
  private final List<String> lockNames;
  private final WaiterPartition waiterPartition;

  TortureRun(RunSettings settings, Target target, String jar) {
    this.settings = settings;
    this.target = target;
    this.dir =
        settings
            .directory()
            .resolve(
                target.name()
                    + (settings.workload() == Workload.LOCK ? "" : "-" + settings.workload().id())
                    + "-"
                    + settings.scenario().id());
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
    this.faults = new FaultLog(dir.resolve("faults.history"));
    this.registers = new RegisterServer(new EventLog(dir.resolve("register.history"), "register"));
    String run = Long.toString(System.nanoTime() % 1_000_000, 36);
    List<String> lockNames = new ArrayList<>();
    if (settings.workload() == Workload.ELECTION) {
      // One election, whatever --locks says: its lock is the only one the candidates take.
      lockNames.add("torture-" + settings.scenario().id() + "-" + run + "-election");
    } else if (settings.workload() == Workload.SEMAPHORE) {
      // One semaphore likewise: every worker takes its permits.
      lockNames.add("torture-" + settings.scenario().id() + "-" + run + "-semaphore");
    } else {
      for (int i = 0; i < settings.locks(); i++) {
        lockNames.add("torture-" + settings.scenario().id() + "-" + run + "-" + i);
      }
    }
    this.lockNames = List.copyOf(lockNames);
    this.workers = new WorkerPool(settings, target, jar, dir, lockNames, registers.port());
    this.probe = new Probe(settings, target, dir, clientThreads);
    this.waiterPartition =
        new WaiterPartition(settings, target, dir, lockNames.get(0), probe, faults, clientThreads);
  }

  RunResult run() throws InterruptedException {
    Scenario scenario = settings.scenario();
    Optional<ServerClockSampler> serverClock = ServerClockSampler.start(target, dir);
    try (probe) {
      probe.connect();
      if (settings.workload() == Workload.SEMAPHORE) {
        PermitFence fence = new PermitFence(probe::permitTokens, registers::delisted);
        registers.fencePermits(fence);
        String semaphore = lockNames.get(0);
        fencePolls.scheduleWithFixedDelay(
            () -> fence.poll(semaphore),
            0,
            PermitFence.POLL_EVERY.toMillis(),
            java.util.concurrent.TimeUnit.MILLISECONDS);
      }
      for (int i = 0; i < settings.workers(); i++) {
        workers.spawn(
            scenario == Scenario.CLOCK_OFFSET ? CLOCK_OFFSETS_HOURS[i % 8] * 3_600_000 : 0);
      }
      // The run starts once the workers contend: the first critical section entered.
      registers.awaitEntry(workers.ids(), Duration.ofSeconds(60));
      faults.append(Event.Kind.RUN_BEGIN, "-", 0, scenario.id());
      long end = System.nanoTime() + settings.duration().toNanos();
      new FaultSchedule(settings, target, faults, registers, workers, probe, waiterPartition)
          .injectUntil(end);
      probe.awaitContenders();
      faults.append(Event.Kind.RUN_END, "-", 0, scenario.id());
      fencePolls.shutdownNow();
    } finally {
      // The probe's client is closed first (by the try); its proxies only once nothing else runs.
      fencePolls.shutdownNow();
      workers.stopAll();
      waiterPartition.close();
      probe.closeProxies();
      clientThreads.shutdownNow();
      registers.close();
    }
    String clockSummary = serverClock.map(ServerClockSampler::stop).orElse("");
    List<Event> history = EventLog.readAll(dir);
    return new Checker(settings, target.nextGrantBound(settings.lease()), history)
        .check(target.name(), faults.injectedCount())
        .withServerClock(clockSummary);
  }
}
