package io.dlock.spring.election;

import io.dlock.LeaderTerm;
import java.util.Objects;

/**
 * The connection is back with the same session after {@link LeadershipUncertain}: the term stands;
 * resume leader-only work.
 *
 * @param term the term, still this instance's
 */
public record LeadershipRestored(LeaderTerm term) implements LeadershipEvent {
  public LeadershipRestored {
    Objects.requireNonNull(term, "term");
  }
}
