/**
 * Metrics of every lock of the client: a {@link io.dlock.LockEventListener} on Micrometer, when it
 * is on the class path.
 */
@NullMarked
package io.dlock.spring.metrics;

import org.jspecify.annotations.NullMarked;
