package io.dlock;

/** The state of a {@link Lease}. */
public enum LeaseState {
  /** Granted and, as far as the client knows, still held. */
  VALID,
  /**
   * The backend cannot confirm the lease right now (for example a ZooKeeper connection is
   * suspended); it may come back as {@link #VALID} or turn {@link #LOST}. Not valid for writes.
   */
  UNCERTAIN,
  /** The lease was lost: expired, taken over, or its session ended. Final. */
  LOST,
  /** Released by its holder. Final. */
  RELEASED
}
