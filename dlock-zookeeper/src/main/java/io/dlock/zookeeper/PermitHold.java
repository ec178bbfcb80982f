package io.dlock.zookeeper;

/**
 * One grant of permits held through this client: its holder node, the node's creation zxid (the
 * fencing token, by which the server tells this grant from any later node of the same path), and
 * the end of its lease on the client's clock, after which this client deletes the node itself.
 */
final class PermitHold {
  final LockAndOwner key;
  final String path;
  final long token;

  /** On the lease timer's clock; extended by grants repeated and by renewals. */
  volatile long leaseEndNanos;

  PermitHold(LockAndOwner key, String path, long token, long leaseEndNanos) {
    this.key = key;
    this.path = path;
    this.token = token;
    this.leaseEndNanos = leaseEndNanos;
  }

  /** Extends the lease to {@code endNanos}, never shortening it. */
  void extendTo(long endNanos) {
    if (endNanos - leaseEndNanos > 0) {
      leaseEndNanos = endNanos;
    }
  }
}
