package io.dlock;

import java.time.Duration;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * What a backend knows about one held lock, for inspection and administration. It never carries the
 * owner token of a grant, which is the secret that allows releasing and renewing it.
 *
 * @param name the lock's name
 * @param holder who holds it, as recorded at grant time: {@code host/pid/thread}, or {@code owner
 *     id <id>} for an owner id
 * @param fencingToken the grant's fencing token
 * @param holds the hold count kept on the server (1 unless an owner id re-entered)
 * @param heldSince when it was granted, by the holder's wall clock (for display), or null
 * @param leaseRemaining how long the lease lasts without renewal, by the server, or null if the
 *     lease is a session (ZooKeeper)
 */
public record LockInfo(
    String name,
    String holder,
    long fencingToken,
    int holds,
    @Nullable Instant heldSince,
    @Nullable Duration leaseRemaining) {}
