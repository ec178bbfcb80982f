package io.dlock.torture;

import io.dlock.testkit.net.TcpProxy;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The worker processes of a run. Each is a JVM of its own started from the torture jar, so that a
 * fault can stop or kill it whole; it reaches the backend through proxies of its own, so that a
 * fault can cut or delay one worker's path and not the others'; and it writes its own history.
 */
final class WorkerPool {
  private final RunSettings settings;
  private final Target target;
  private final String jar;
  private final Path dir;
  private final List<String> lockNames;
  private final int registersPort;
  private final Map<String, WorkerProcess> workers = new LinkedHashMap<>();
  private int nextWorker = 1;

  WorkerPool(
      RunSettings settings,
      Target target,
      String jar,
      Path dir,
      List<String> lockNames,
      int registersPort) {
    this.settings = settings;
    this.target = target;
    this.jar = jar;
    this.dir = dir;
    this.lockNames = List.copyOf(lockNames);
    this.registersPort = registersPort;
  }

  /** The running workers' ids, oldest first. */
  List<String> ids() {
    return List.copyOf(workers.keySet());
  }

  WorkerProcess get(String id) {
    return workers.get(id);
  }

  /**
   * Takes a worker out of the run (to kill it): it is no longer a victim, nor stopped at the end.
   */
  WorkerProcess remove(String id) {
    return workers.remove(id);
  }

  /** Delays every worker's connections by {@code millis} each way; 0 ends the delay. */
  void delay(long millis) {
    workers.values().forEach(w -> w.proxies().forEach(p -> p.delay(millis)));
  }

  /** Starts a worker, its clock offset by {@code clockOffsetMillis}. */
  void spawn(long clockOffsetMillis) {
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
    // A candidate stands in the one election named, a permit worker takes permits of the one
    // semaphore named (WorkerPool's caller names one).
    args.put(
        switch (settings.workload()) {
          case ELECTION -> "election";
          case SEMAPHORE -> "semaphore";
          case LOCK -> "locks";
        },
        String.join(",", lockNames));
    args.put("lease-ms", Long.toString(settings.lease().toMillis()));
    args.put("wait-ms", Long.toString(settings.workerWait().toMillis()));
    boolean permits = settings.workload() == Workload.SEMAPHORE;
    args.put(
        "hold-min-ms",
        Long.toString(permits ? settings.permitHoldMinMillis() : settings.holdMinMillis()));
    args.put(
        "hold-max-ms",
        Long.toString(permits ? settings.permitHoldMaxMillis() : settings.holdMaxMillis()));
    if (permits) {
      args.put("permits", Integer.toString(settings.permits()));
    }
    if (settings.workload() == Workload.ELECTION) {
      args.put("term-min-ms", Long.toString(settings.termMinMillis()));
      args.put("term-max-ms", Long.toString(settings.termMaxMillis()));
    }
    if (settings.scenario() == Scenario.PARTITION) {
      // Half the critical sections (in an election, half the terms) outlast the lease, so that a
      // holder cut off as it starts one must be told of its loss; the other half end first, and
      // their release (a resignation) must fail.
      args.put("long-hold-percent", "50");
      args.put("long-hold-ms", Long.toString(settings.longHoldMillis()));
    }
    if (ownerId != null) {
      args.put("owner-id", ownerId);
    }
    args.putAll(target.workerArgs(settings.lease()));
    args.put("registers", Integer.toString(registersPort));
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
    command.addAll(ClassDataArchive.options(settings.directory(), target.name()));
    command.addAll(List.of("-cp", jar, settings.workload().mainClass()));
    command.addAll(Worker.args(args, target.properties(settings.lease())));
    try {
      Process p =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(dir.resolve(id + ".log").toFile())
              .start();
      workers.put(id, new WorkerProcess(id, p, proxies, ownerId));
      ClassDataArchive.started(target.name(), command, p);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start worker " + id, e);
    }
  }

  /** Ends every worker: closing its standard input asks it to release and exit. */
  void stopAll() throws InterruptedException {
    for (WorkerProcess w : workers.values()) {
      if (w.process().isAlive()) {
        w.signal("CONT"); // harmless if it was not stopped
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
