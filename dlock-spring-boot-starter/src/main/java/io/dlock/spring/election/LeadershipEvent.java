package io.dlock.spring.election;

import io.dlock.LeaderTerm;

/**
 * A change of this instance's leadership in the starter's election, published as a Spring
 * application event by {@link DlockLeaderElection}, once per change and in order: {@link
 * LeadershipGranted}, then any number of {@link LeadershipUncertain} and {@link LeadershipRestored}
 * pairs, then {@link LeadershipRevoked}; and again for the next term. Listen to one kind
 * ({@code @EventListener void on(LeadershipGranted granted)}) or to all of them ({@code
 * LeadershipEvent}).
 *
 * <p>The events are published on the election's own thread, one at a time: a listener that blocks
 * delays the next event (not the lock client's other notices). Hand long work to an executor.
 */
public sealed interface LeadershipEvent
    permits LeadershipGranted, LeadershipUncertain, LeadershipRestored, LeadershipRevoked {

  /** The term the event is about. */
  LeaderTerm term();

  /** The term's epoch: its fencing token, higher with every term of the election. */
  default long epoch() {
    return term().epoch();
  }
}
