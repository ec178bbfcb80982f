/**
 * The Spring Boot starter of dlock: {@link io.dlock.spring.DistributedLock} methods, their fencing
 * token ({@link io.dlock.spring.DistributedLockContext}, {@link io.dlock.spring.FencingToken}), and
 * the instrumented acquisitions every feature of the starter goes through ({@link
 * io.dlock.spring.LockAcquirer}).
 */
@NullMarked
package io.dlock.spring;

import org.jspecify.annotations.NullMarked;
