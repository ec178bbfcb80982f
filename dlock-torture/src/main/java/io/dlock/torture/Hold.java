package io.dlock.torture;

/**
 * One grant as its holder saw it. The interval is taken conservatively: a hold starts when {@code
 * acquire} returned (after the server granted) and ends at the first moment its holder could know
 * it no longer holds (it starts to release, its loss listener fires, it finds the lease invalid, or
 * it is killed), so an overlap of two holds is an overlap that happened.
 *
 * <p>In an election run a hold is a term of the election's lock, its token the term's epoch: from
 * {@code elected} to the first of {@code revoked}, its lease found invalid, its leader starting to
 * resign or to close its client, or its leader's death. A leader that is told {@code uncertain}
 * pauses its work but still holds: the term stands until it is revoked.
 *
 * <p>In a semaphore run a hold is a grant of {@link #count} permits of the semaphore, from {@code
 * acquire} returning to the first of its release, its loss signal, its lease found invalid, or its
 * holder's death; several may stand at once, up to the bound.
 */
final class Hold {
  final String source;
  final String lock;
  final long token;
  final long start;
  final String owner; // the shared owner id, or null
  long acquiringAt;
  String number = ""; // the worker's number for this hold ("#12"), or "" if it gives none
  long end = Long.MAX_VALUE;
  long lostAt = Long.MAX_VALUE;
  long releasedAt = Long.MAX_VALUE;
  String releaseResult;
  boolean paused; // or its grant was deleted behind its back (a forced release)
  int count = 1; // a permit grant's count of permits (a lock's grant is one)

  Hold(String source, String lock, long token, long start, String owner) {
    this.source = source;
    this.lock = lock;
    this.token = token;
    this.start = start;
    this.owner = owner;
    this.acquiringAt = start;
  }

  /**
   * Holds of one grant: with a shared owner id, every hold of that owner id with the same token
   * (one grant, re-entered across processes) is one holder; otherwise each hold is its own.
   */
  Object grant() {
    return owner == null ? this : lock + "|" + token + "|" + owner;
  }

  boolean contains(long t) {
    return start <= t && t <= end;
  }
}
