package io.dlock.core;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Per lock name, the highest fencing token this client was granted while acquisitions of the name
 * were in flight, and when: a grant answered with a lower token to a request sent before that grant
 * was admitted has ended on the server (tokens of a name only grow, and a name has one grant at a
 * time), however late its answer came, and is refused.
 *
 * <p>Why it outlives grants: an owner id's acquisition whose answer is late can find the newer
 * grant of its owner id already released and gone from the client; comparing with the client's
 * current grant alone then handed the ended one out as a live lease (found by review, issue 29). A
 * mark lives only while an acquisition of its name is in flight, since only those can bring a late
 * answer (an answer that comes after its caller gave up is undone, never registered), so the map
 * holds no more entries than names being acquired.
 *
 * <p>Why "after": only a grant admitted after the request was sent proves its answer stale. A
 * request sent later that is answered with a lower token found the server's counters lower than
 * before (a server that lost them: no persistence, a failover that lost writes); refusing it would
 * refuse every grant of the name for as long as the mark lives, which on a busy lock is always
 * (found by review). Such a grant is handed out: whether tokens may go back is the backend's
 * promise (its page says when they may), not this client's to judge.
 *
 * <p>Why not permits: a semaphore has many grants at a time, so a permit answered with a lower
 * token than another permit of the same grant name was not granted before it ended; refusing it
 * gave back a live permit and asked again with the same owner, which a store that answers the
 * repeat before the queued release hands the same grant back, and the release then deletes it under
 * its holder (found by review). Each permit has an owner of its own, whose late answer the
 * acquisition undoes.
 */
final class TokenHighWater {
  private static final class Mark {
    int inFlight;
    long highest = Long.MIN_VALUE;
    long raisedAt;
  }

  private final ConcurrentHashMap<String, Mark> marks = new ConcurrentHashMap<>();

  /**
   * Counts the raises of every mark: "after the request was sent" is a position in this count, not
   * a time, so that it is exact whatever the clock (a test's clock may stand still).
   */
  private final AtomicLong raises = new AtomicLong();

  /** Where the count of raises stands: take it before a request is sent. */
  long position() {
    return raises.get();
  }

  /** An acquisition of {@code name} starts: grants answered from now on are compared. */
  void enter(String name) {
    if (PermitGrantName.isPermit(name)) {
      return;
    }
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
   * Admits a grant of {@code name} with {@code fencingToken}, answering a request sent at {@code
   * sentAt} (a {@link #position}), and raises the mark to it; or refuses it if a grant with a
   * higher token was admitted after that request was sent.
   *
   * @return the higher token that makes this grant stale, or {@code fencingToken} if admitted
   */
  long admit(String name, long fencingToken, long sentAt) {
    if (PermitGrantName.isPermit(name)) {
      return fencingToken;
    }
    long[] seen = {fencingToken};
    marks.computeIfPresent(
        name,
        (n, m) -> {
          if (m.highest > fencingToken && m.raisedAt > sentAt) {
            seen[0] = m.highest; // granted anew after this request was sent: stale
          } else if (m.highest != fencingToken) {
            // Higher: the mark rises. Lower, to a request sent after the mark was set: the
            // server's counters went back, and the mark follows them from here on.
            m.highest = fencingToken;
            m.raisedAt = raises.incrementAndGet();
          }
          return m;
        });
    return seen[0];
  }
}
