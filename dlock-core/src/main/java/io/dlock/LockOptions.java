package io.dlock;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * How a lock is held: the lease time, whether the client renews it, and an optional owner id. An
 * immutable value; the {@code with...} methods return modified copies and validate their argument.
 *
 * <p>Defaults: a 30 s lease renewed automatically (every third of the lease) while the client
 * lives, and the calling thread as the holder.
 */
public final class LockOptions {

  /** The shortest lease accepted: shorter leases cannot be renewed reliably over a network. */
  public static final Duration MIN_LEASE = Duration.ofMillis(100);

  /** The longest lease accepted. */
  public static final Duration MAX_LEASE = Duration.ofDays(7);

  /** The longest owner id accepted, in characters. */
  public static final int MAX_OWNER_ID_LENGTH = 128;

  private static final LockOptions DEFAULTS = new LockOptions(Duration.ofSeconds(30), true, null);

  private final Duration leaseTime;
  private final boolean autoRenew;
  private final @Nullable String ownerId;

  private LockOptions(Duration leaseTime, boolean autoRenew, @Nullable String ownerId) {
    this.leaseTime = leaseTime;
    this.autoRenew = autoRenew;
    this.ownerId = ownerId;
  }

  /** A 30 s lease, renewed automatically, held by the calling thread. */
  public static LockOptions defaults() {
    return DEFAULTS;
  }

  /**
   * The same options with this lease time, renewed automatically while the holder lives.
   *
   * @param leaseTime from {@link #MIN_LEASE} to {@link #MAX_LEASE}
   */
  public LockOptions withRenewedLease(Duration leaseTime) {
    return new LockOptions(checkLease(leaseTime), true, ownerId);
  }

  /**
   * The same options with a fixed lease: never renewed, the lock expires {@code leaseTime} after it
   * was granted unless released before.
   *
   * @param leaseTime from {@link #MIN_LEASE} to {@link #MAX_LEASE}
   */
  public LockOptions withFixedLease(Duration leaseTime) {
    return new LockOptions(checkLease(leaseTime), false, ownerId);
  }

  /**
   * The same options with an explicit owner id: every caller that passes the same id (in any
   * thread, and on Redis, Redlock and JDBC lease rows in any process) re-enters the same grant, and
   * the hold count is kept on the server. Backends whose locks live in one session (ZooKeeper by
   * default, JDBC session and row locks) re-enter within one client only: another client with the
   * same id waits like a stranger ({@link BackendCapability#OWNER_IDS_ACROSS_CLIENTS}). Use an id
   * that is unique to one call chain (a request id, a job id), never a constant shared by unrelated
   * callers.
   *
   * @param ownerId 1 to {@value #MAX_OWNER_ID_LENGTH} characters, no control characters
   */
  public LockOptions withOwnerId(String ownerId) {
    Objects.requireNonNull(ownerId, "ownerId");
    if (ownerId.isEmpty() || ownerId.length() > MAX_OWNER_ID_LENGTH) {
      throw new IllegalArgumentException(
          "ownerId must have 1 to "
              + MAX_OWNER_ID_LENGTH
              + " characters, but has "
              + ownerId.length());
    }
    if (ownerId.chars().anyMatch(Character::isISOControl)) {
      throw new IllegalArgumentException("ownerId must not contain control characters");
    }
    return new LockOptions(leaseTime, autoRenew, ownerId);
  }

  /** The lease time: how long the lock survives its holder's silence. */
  public Duration leaseTime() {
    return leaseTime;
  }

  /** Whether the client renews the lease while the holder lives. */
  public boolean autoRenew() {
    return autoRenew;
  }

  /** The explicit owner id, or empty when the holder is the calling thread. */
  public Optional<String> ownerId() {
    return Optional.ofNullable(ownerId);
  }

  private static Duration checkLease(Duration leaseTime) {
    return checkedLease("leaseTime", leaseTime);
  }

  /**
   * {@code lease}, if a lease can be that long: from {@link #MIN_LEASE} to {@link #MAX_LEASE}.
   *
   * @param parameter the caller's name for it, in the message
   * @throws IllegalArgumentException naming {@code parameter} and the range otherwise
   */
  public static Duration checkedLease(String parameter, Duration lease) {
    Objects.requireNonNull(lease, parameter);
    if (lease.compareTo(MIN_LEASE) < 0 || lease.compareTo(MAX_LEASE) > 0) {
      throw new IllegalArgumentException(
          parameter + " must be from " + MIN_LEASE + " to " + MAX_LEASE + ", but was " + lease);
    }
    return lease;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof LockOptions other
        && leaseTime.equals(other.leaseTime)
        && autoRenew == other.autoRenew
        && Objects.equals(ownerId, other.ownerId);
  }

  @Override
  public int hashCode() {
    return Objects.hash(leaseTime, autoRenew, ownerId);
  }

  @Override
  public String toString() {
    return "LockOptions[leaseTime="
        + leaseTime
        + ", autoRenew="
        + autoRenew
        + (ownerId == null ? "" : ", ownerId=" + ownerId)
        + "]";
  }
}
