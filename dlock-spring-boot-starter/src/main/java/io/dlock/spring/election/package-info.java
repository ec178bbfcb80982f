/**
 * The starter's leader election ({@code dlock.election.*}): {@link
 * io.dlock.spring.election.DlockLeaderElection}, a candidacy joined with the application context,
 * and the Spring application events it publishes ({@link
 * io.dlock.spring.election.LeadershipEvent}), for beans that start and stop leader-only work.
 * Methods that run only on the leader: {@link io.dlock.spring.LeaderOnly}.
 */
@NullMarked
package io.dlock.spring.election;

import org.jspecify.annotations.NullMarked;
