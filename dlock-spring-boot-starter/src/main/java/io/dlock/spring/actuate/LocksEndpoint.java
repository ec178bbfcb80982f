package io.dlock.spring.actuate;

import io.dlock.HeldLeaseInfo;
import io.dlock.LockClient;
import java.util.List;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The {@code locks} endpoint ({@code /actuator/locks}): the locks this instance holds now, with
 * fencing token, hold count, since when (this machine's wall clock), lease remaining and state.
 * Read-only; it never shows owner tokens, the secret that allows releasing a lock.
 */
@Endpoint(id = "locks")
public class LocksEndpoint {
  private final LockClient client;

  /** An endpoint over {@code client}. */
  public LocksEndpoint(LockClient client) {
    this.client = client;
  }

  /** The locks held now. */
  @ReadOperation
  public HeldLocks locks() {
    return new HeldLocks(
        client.backendName(), client.heldLeases().stream().map(HeldLock::of).toList());
  }

  /**
   * The locks this instance holds.
   *
   * @param backend the backend's short name ({@code redis}, {@code zookeeper}, {@code jdbc})
   * @param locks one entry per grant
   */
  public record HeldLocks(String backend, List<HeldLock> locks) {}

  /**
   * One grant held by this instance.
   *
   * @param name the full lock name
   * @param fencingToken the grant's fencing token
   * @param holdCount holds of this instance on the grant (reentrancy)
   * @param heldSince ISO-8601 instant of the grant, by this machine's clock
   * @param leaseRemaining ISO-8601 duration the lease lasts without renewal
   * @param leaseRemainingMillis the same in milliseconds
   * @param autoRenew whether the lease is renewed while held
   * @param state {@code VALID}, {@code UNCERTAIN} or {@code LOST}
   */
  public record HeldLock(
      String name,
      long fencingToken,
      int holdCount,
      String heldSince,
      String leaseRemaining,
      long leaseRemainingMillis,
      boolean autoRenew,
      String state) {

    static HeldLock of(HeldLeaseInfo info) {
      return new HeldLock(
          info.lockName(),
          info.fencingToken(),
          info.holdCount(),
          info.heldSince().toString(),
          info.remaining().toString(),
          info.remaining().toMillis(),
          info.autoRenew(),
          info.state().name());
    }
  }
}
