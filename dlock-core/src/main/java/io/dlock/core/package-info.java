/**
 * The algorithm, written once over the {@link io.dlock.spi.LockBackend} primitives: waiting woken
 * by release signals, deadlines on the monotonic clock, reentrancy, batched lease renewal from one
 * scheduler, bounded backend calls, and lost-lease notices.
 */
@NullMarked
package io.dlock.core;

import org.jspecify.annotations.NullMarked;
