package io.dlock.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method only while this instance leads the starter's leader election ({@code
 * dlock.election.name}); on any other instance, and on the leader while its term is uncertain (the
 * backend's session suspended), the call is skipped, not queued: it returns {@code null}, {@code
 * Optional.empty()}, {@code false} or zero, a completed future or an empty publisher (by return
 * type), as {@link OnLockFailure#SKIP} does.
 *
 * <pre>{@code
 * @Scheduled(fixedDelay = 60_000)
 * @LeaderOnly
 * public void sendReminders() {
 *   long epoch = LeaderContext.currentEpoch(); // fence what the job writes with it
 *   ...
 * }
 * }</pre>
 *
 * <p>Leadership is checked when the method is called, without a backend call (the term this
 * instance holds, whose lease the client renews); the method is not stopped if the term ends while
 * it runs: fence its writes with {@link LeaderContext#currentEpoch()}, or check {@code
 * LeaderContext.currentTerm()}'s lease.
 *
 * <p>Needs {@code dlock.election.name}: a {@code @LeaderOnly} method without it fails the start-up,
 * naming the property. Works on Spring beans called through their proxy (not on calls from inside
 * the same object), like {@code @Transactional}; it applies outside a {@link Locked} or {@code
 * Transactional} of the same method, so that a skipped call takes no lock and starts no
 * transaction. With {@code dlock.enabled=false} the method runs on every instance (logged as a
 * warning at start-up, naming it).
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface LeaderOnly {}
