/**
 * The dlock API: a {@link io.dlock.LockClient} hands out named {@link io.dlock.DistributedLock}s;
 * acquiring one returns a {@link io.dlock.Lease} that carries a fencing token and tells its holder
 * when it is lost.
 */
@NullMarked
package io.dlock;

import org.jspecify.annotations.NullMarked;
