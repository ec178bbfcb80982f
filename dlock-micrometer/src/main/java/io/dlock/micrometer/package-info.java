/**
 * Micrometer meters for every lock of a {@link io.dlock.LockClient}, from the core's {@link
 * io.dlock.LockEventListener}: {@link io.dlock.micrometer.MicrometerLockMetrics}, with the lock tag
 * mapped by {@link io.dlock.micrometer.LockTags}.
 */
@NullMarked
package io.dlock.micrometer;

import org.jspecify.annotations.NullMarked;
