package io.dlock.core;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Per lock name, the highest fencing token this client was granted while acquisitions of the name
 * were in flight: a grant answered with a lower token has ended on the server (tokens of a name
 * only grow, and a name has one grant at a time), however late its answer came, and is refused.
 *
 * <p>Why it outlives grants: an owner id's acquisition whose answer is late can find the newer
 * grant of its owner id already released and gone from the client; comparing with the client's
 * current grant alone then handed the ended one out as a live lease (found by review, issue 29). A
 * mark lives only while an acquisition of its name is in flight, since only those can bring a late
 * answer (an answer that comes after its caller gave up is undone, never registered), so the map
 * holds no more entries than acquisitions in flight.
 */
final class TokenHighWater {
  private static final class Mark {
    int inFlight;
    long highest = Long.MIN_VALUE;
  }

  private final ConcurrentHashMap<String, Mark> marks = new ConcurrentHashMap<>();

  /** An acquisition of {@code name} starts: grants answered from now on are compared. */
  void enter(String name) {
    marks.compute(
        name,
        (n, m) -> {
          Mark mark = m == null ? new Mark() : m;
          mark.inFlight++;
          return mark;
        });
  }

  /** An acquisition of {@code name} ended (always after {@link #enter}). */
  void exit(String name) {
    marks.computeIfPresent(name, (n, m) -> --m.inFlight == 0 ? null : m);
  }

  /**
   * Admits a grant of {@code name} with {@code fencingToken} and raises the mark to it, or refuses
   * it if a grant with a higher token was admitted while an acquisition of the name was in flight.
   *
   * @return the higher token that makes this grant stale, or {@code fencingToken} if admitted
   */
  long admit(String name, long fencingToken) {
    long[] seen = {fencingToken};
    marks.computeIfPresent(
        name,
        (n, m) -> {
          if (m.highest > fencingToken) {
            seen[0] = m.highest;
          } else {
            m.highest = fencingToken;
          }
          return m;
        });
    return seen[0];
  }
}
