package io.dlock.spring.election;

import io.dlock.LeaderTerm;
import java.util.Objects;

/**
 * This instance leads from now on: start leader-only work, and fence what it writes with {@link
 * #epoch()}.
 *
 * @param term the new term
 */
public record LeadershipGranted(LeaderTerm term) implements LeadershipEvent {
  public LeadershipGranted {
    Objects.requireNonNull(term, "term");
  }
}
