package io.dlock;

import java.time.Duration;
import java.time.Instant;

/**
 * A snapshot of one grant a client holds, for inspection (endpoints, status commands, tests).
 *
 * @param lockName the lock's name
 * @param fencingToken the grant's fencing token
 * @param holdCount the holds this client has on the grant
 * @param heldSince when the grant was made, by this machine's wall clock (for display only)
 * @param remaining how long the lease lasts without renewal, by the monotonic clock
 * @param autoRenew whether the client renews it
 * @param state the grant's state
 */
public record HeldLeaseInfo(
    String lockName,
    long fencingToken,
    int holdCount,
    Instant heldSince,
    Duration remaining,
    boolean autoRenew,
    LeaseState state) {}
