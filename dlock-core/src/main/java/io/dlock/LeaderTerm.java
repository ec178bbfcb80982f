package io.dlock;

import java.util.Objects;

/**
 * One term of leadership of an election: this candidate leads from its grant until its lease ends.
 *
 * @param election the election's name
 * @param epoch the term's fencing token: it strictly increases with every term of the election, in
 *     every process, so a resource that remembers the highest epoch it has seen refuses the writes
 *     of an earlier leader (one paused past its lease, say)
 * @param lease the lease that carries the term: {@link Lease#isValid()} says whether it still
 *     stands, {@link Lease#ensureValid()} checks before leader-only work
 */
public record LeaderTerm(String election, long epoch, Lease lease) {
  public LeaderTerm {
    Objects.requireNonNull(election, "election");
    Objects.requireNonNull(lease, "lease");
  }
}
