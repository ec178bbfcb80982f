/**
 * OpenTelemetry spans for every lock of a {@link io.dlock.LockClient}, from the core's {@link
 * io.dlock.LockEventListener}: {@link io.dlock.opentelemetry.OpenTelemetryLockTracing}.
 */
@NullMarked
package io.dlock.opentelemetry;

import org.jspecify.annotations.NullMarked;
