package io.dlock.spring.election;

import io.dlock.LeaderTerm;
import io.dlock.LeadershipListener.Revocation;
import java.util.Objects;

/**
 * The term has ended: stop leader-only work. Published for every {@link LeadershipGranted}, also
 * when the application context stops ({@link Revocation#RESIGNED}), before its beans are destroyed.
 * Unless the election was stopped or resigned, this instance competes again, and a later term comes
 * with a higher epoch.
 *
 * @param term the term that ended
 * @param reason why: {@link Revocation#TAKEN_OVER}, {@link Revocation#EXPIRED}, {@link
 *     Revocation#SESSION_LOST}, {@link Revocation#RESIGNED} or {@link Revocation#CLIENT_CLOSED}
 * @param detail a human-readable explanation, for logs
 */
public record LeadershipRevoked(LeaderTerm term, Revocation reason, String detail)
    implements LeadershipEvent {
  public LeadershipRevoked {
    Objects.requireNonNull(term, "term");
    Objects.requireNonNull(reason, "reason");
    Objects.requireNonNull(detail, "detail");
  }
}
