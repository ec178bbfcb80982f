package io.dlock.torture;

import java.time.Duration;

/** What dlock-jdbc's modes promise a dead or silent holder may keep a lock (docs/jdbc.md). */
final class JdbcModes {
  /** dlock-jdbc's default heartbeat interval in the connection-bound modes. */
  static final Duration HEARTBEAT = Duration.ofSeconds(1);

  private JdbcModes() {}

  /**
   * Lease rows: the lease, judged by the database's clock. Session and row locks: the database ends
   * a silent holder's session at most the lease, a heartbeat interval and 1 s after its last
   * statement (the idle timeouts dlock sets on each grant connection), and a waiter re-checks
   * within one more heartbeat interval, since a lock freed with its session sends no signal.
   */
  static Duration holdAfterDeath(String mode, Duration lease) {
    return mode.equals("lease-row")
        ? lease
        : lease.plus(HEARTBEAT).plus(Duration.ofSeconds(1)).plus(HEARTBEAT);
  }
}
