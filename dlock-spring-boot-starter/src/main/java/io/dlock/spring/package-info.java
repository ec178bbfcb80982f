/**
 * The Spring Boot starter of dlock: {@link io.dlock.spring.Locked} methods, their fencing token
 * ({@link io.dlock.spring.LockedMethodContext}, {@link io.dlock.spring.FencingToken}), {@link
 * io.dlock.spring.LeaderOnly} methods and their term ({@link io.dlock.spring.LeaderContext}), and
 * the acquisitions the starter's features go through ({@link io.dlock.spring.LockAcquirer}), under
 * lock names whose patterns the metrics tag them with ({@link io.dlock.spring.LockNamePatterns}).
 */
@NullMarked
package io.dlock.spring;

import org.jspecify.annotations.NullMarked;
