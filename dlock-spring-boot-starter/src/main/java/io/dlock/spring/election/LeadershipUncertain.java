package io.dlock.spring.election;

import io.dlock.LeaderTerm;
import java.util.Objects;

/**
 * The backend's connection is suspended (ZooKeeper; a JDBC session lock's connection): the term may
 * end without this instance hearing of it. Pause leader-only work until {@link LeadershipRestored}
 * or {@link LeadershipRevoked}. {@code @LeaderOnly} methods are skipped meanwhile.
 *
 * @param term the term in doubt
 */
public record LeadershipUncertain(LeaderTerm term) implements LeadershipEvent {
  public LeadershipUncertain {
    Objects.requireNonNull(term, "term");
  }
}
