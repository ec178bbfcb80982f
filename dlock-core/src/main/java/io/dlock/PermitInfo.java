package io.dlock;

import java.time.Duration;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * What a backend knows about one grant of a semaphore's permits, for inspection and administration.
 * Like {@link LockInfo}, never the owner token.
 *
 * @param semaphore the semaphore's name
 * @param holder who holds it, as recorded at grant time ({@code host/pid/thread})
 * @param fencingToken the grant's fencing token, which also names the grant for {@link
 *     LeasedSemaphore#forceRelease(long)}
 * @param count how many permits the grant holds
 * @param heldSince when it was granted, by the holder's wall clock (for display), or null
 * @param leaseRemaining how long its lease lasts without renewal, by the server, or null if the
 *     lease is a session (ZooKeeper)
 */
public record PermitInfo(
    String semaphore,
    String holder,
    long fencingToken,
    int count,
    @Nullable Instant heldSince,
    @Nullable Duration leaseRemaining) {}
