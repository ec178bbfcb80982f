package io.dlock.torture;

import java.nio.file.Path;

/**
 * The fault injector's history ({@code faults.history}), and how many faults it injected: a run of
 * a faulty scenario that injected none proved nothing, and the checker says so.
 */
final class FaultLog {
  private final EventLog log;
  private int injected;

  FaultLog(Path file) {
    this.log = new EventLog(file, "faults");
  }

  /** Records a fault as it is injected, and counts it. */
  void injected(Event.Kind kind, String lock, long token, String detail) {
    log.append(kind, lock, token, detail);
    injected++;
  }

  /** Records what is not a fault injected: the run's begin and end, a fault's end, a failure. */
  void append(Event.Kind kind, String lock, long token, String detail) {
    log.append(kind, lock, token, detail);
  }

  int injectedCount() {
    return injected;
  }
}
