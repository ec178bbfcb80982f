package io.dlock.torture;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a run's merged history and measures what the safety claims promise. Every interval is taken
 * conservatively: a hold starts when {@code acquire} returned (after the server granted) and ends
 * at the first moment its holder could know it no longer holds (it starts to release, its loss
 * listener fires, it finds the lease invalid, or it is killed), so an overlap found here is an
 * overlap that happened.
 */
final class Checker {
  private final RunSettings settings;
  private final Duration nextGrantBound;
  private final List<Event> history;

  Checker(RunSettings settings, Duration nextGrantBound, List<Event> history) {
    this.settings = settings;
    this.nextGrantBound = nextGrantBound;
    this.history = history;
  }

  /** One grant as its holder saw it. */
  static final class Hold {
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

  RunResult check(String backend, int faultsInjected) {
    Scenario scenario = settings.scenario();
    List<Hold> holds = new ArrayList<>();
    Map<String, Hold> open = new HashMap<>(); // source|lock|token -> hold
    Map<String, List<Hold>> bySource = new HashMap<>();
    long runBegin = Long.MIN_VALUE;
    long runEnd = Long.MAX_VALUE;
    long lastEvent = 0;
    int noGrant = 0;
    int releaseErrors = 0;
    java.util.Set<String> killed = new java.util.HashSet<>();
    int lostUpdates = 0;
    int staleAccepted = 0;
    int fencedRejections = 0;
    List<long[]> restartWindows = new ArrayList<>();
    long restartBegin = 0;
    Map<String, long[]> openWaits = new HashMap<>(); // source|lock -> {start}
    Map<String, Long> acquiring = new HashMap<>(); // source|lock -> the last ACQUIRING
    List<Object[]> waits = new ArrayList<>(); // {lock, start, end, source}
    Map<String, List<long[]>> waiterCuts = new HashMap<>(); // source -> {begin, end}
    for (Event e : history) {
      lastEvent = Math.max(lastEvent, e.nanos());
      if (e.kind() == Event.Kind.ACQUIRING) {
        openWaits.put(e.source() + "|" + e.lock(), new long[] {e.nanos()});
      } else if (e.kind() == Event.Kind.GRANT || e.kind() == Event.Kind.NO_GRANT) {
        long[] w = openWaits.remove(e.source() + "|" + e.lock());
        if (w != null) {
          waits.add(new Object[] {e.lock(), w[0], e.nanos(), e.source()});
        }
      } else if (e.kind() == Event.Kind.WAITER_CUT_BEGIN) {
        waiterCuts
            .computeIfAbsent(e.detail(), s -> new ArrayList<>())
            .add(new long[] {e.nanos(), Long.MAX_VALUE});
      } else if (e.kind() == Event.Kind.WAITER_CUT_END) {
        List<long[]> cuts = waiterCuts.getOrDefault(e.detail(), List.of());
        if (!cuts.isEmpty()) {
          cuts.get(cuts.size() - 1)[1] = e.nanos();
        }
      } else if (e.kind() == Event.Kind.KILL) {
        openWaits.entrySet().removeIf(o -> o.getKey().startsWith(e.detail() + "|"));
      }
      String key = e.source() + "|" + e.lock() + "|" + e.token();
      if (e.kind() == Event.Kind.ACQUIRING) {
        acquiring.put(e.source() + "|" + e.lock(), e.nanos());
      }
      switch (e.kind()) {
        case RUN_BEGIN -> runBegin = e.nanos();
        case RUN_END -> runEnd = e.nanos();
        case GRANT -> {
          String owner =
              settings.sharedOwnerIds() && e.detail().startsWith("owner ")
                  ? e.detail().substring("owner ".length()).split(" ")[0]
                  : null;
          Hold h = new Hold(e.source(), e.lock(), e.token(), e.nanos(), owner);
          h.number = holdNumber(e.detail());
          h.acquiringAt = acquiring.getOrDefault(e.source() + "|" + e.lock(), e.nanos());
          holds.add(h);
          open.put(key, h);
          bySource.computeIfAbsent(e.source(), s -> new ArrayList<>()).add(h);
        }
        case NO_GRANT -> noGrant++;
        case LOST, INVALID, RELEASING -> {
          Hold h = open.get(key);
          if (h != null
              && e.kind() == Event.Kind.LOST
              && !h.number.equals(holdNumber(e.detail()))) {
            h = null; // a late signal of an earlier hold of the same grant, already ended
          }
          if (h != null) {
            h.end = Math.min(h.end, e.nanos());
            if (e.kind() == Event.Kind.LOST) {
              h.lostAt = Math.min(h.lostAt, e.nanos());
            }
          }
        }
        case RELEASED -> {
          Hold h = open.remove(key);
          if (h != null) {
            h.releasedAt = e.nanos();
            h.releaseResult = e.detail();
            releaseErrors += e.detail().startsWith("error") ? 1 : 0;
          }
        }
        case KILL -> {
          killed.add(e.detail());
          for (Hold h : bySource.getOrDefault(e.detail(), List.of())) {
            h.end = Math.min(h.end, e.nanos());
          }
        }
        case UWRITE -> lostUpdates += e.detail().contains(" lost-update ") ? 1 : 0;
        case FWRITE -> {
          staleAccepted += e.detail().contains(" stale ") ? 1 : 0;
          fencedRejections += e.detail().contains(" rejected ") ? 1 : 0;
        }
        case FREAD -> fencedRejections += e.detail().contains(" rejected ") ? 1 : 0;
          // A member cut off from the others is, to its clients, a server fault as a restart is:
          // the
          // ensemble elects, sessions move, and grants may wait for it.
        case RESTART_BEGIN, MEMBER_CUT_BEGIN -> restartBegin = e.nanos();
        case RESTART_END, MEMBER_CUT_END ->
            restartWindows.add(
                new long[] {restartBegin, e.nanos() + settings.lease().toNanos() * 2});
        default -> {
          // START, register reads and the other fault markers carry nothing to measure here
        }
      }
    }
    for (Hold h : holds) {
      if (h.end == Long.MAX_VALUE) {
        h.end = lastEvent; // the run ended while it held (its worker did not get to log more)
      }
    }
    for (Map.Entry<String, long[]> o : openWaits.entrySet()) {
      String source = o.getKey().substring(0, o.getKey().indexOf('|'));
      String lock = o.getKey().substring(o.getKey().indexOf('|') + 1);
      waits.add(new Object[] {lock, o.getValue()[0], lastEvent, source});
    }
    List<Event> faultEvents = history.stream().filter(e -> e.source().equals("faults")).toList();
    if (scenario == Scenario.PAUSE) {
      for (Event e : faultEvents) {
        if (e.kind() == Event.Kind.STOP) {
          bySource.getOrDefault(e.detail(), List.of()).stream()
              .filter(h -> h.contains(e.nanos()))
              .forEach(h -> h.paused = true);
        }
      }
    }
    // A forced release deletes a grant behind its holders' backs: they learn of it at their next
    // renewal, and meanwhile others may be granted the lock (as after a pause). Every hold of the
    // deleted grant (its lock and token, whichever process holds it) is marked.
    List<Hold> forcedHolds = new ArrayList<>();
    for (Event f : faultEvents) {
      if (f.kind() != Event.Kind.FORCE_RELEASE) {
        continue;
      }
      java.util.Set<Long> tokens = new java.util.HashSet<>();
      holds.stream()
          .filter(h -> h.lock.equals(f.lock()) && h.contains(f.nanos()))
          .forEach(h -> tokens.add(h.token));
      if (f.token() > 0) {
        tokens.add(f.token());
      }
      holds.stream()
          // asked for before the deletion: granted the old grant even if answered after it
          .filter(
              h ->
                  h.lock.equals(f.lock()) && tokens.contains(h.token) && h.acquiringAt <= f.nanos())
          .forEach(
              h -> {
                h.paused = true;
                forcedHolds.add(h);
              });
    }
    List<String> failures = new ArrayList<>();

    // Overlapping holds of one lock (holds of one grant are one holder).
    int overlaps = 0;
    int explained = 0;
    String firstOverlap = null;
    Map<String, List<Hold>> byLock = new HashMap<>();
    holds.forEach(h -> byLock.computeIfAbsent(h.lock, k -> new ArrayList<>()).add(h));
    for (List<Hold> list : byLock.values()) {
      list.sort(Comparator.comparingLong(h -> h.start));
      for (int i = 0; i < list.size(); i++) {
        Hold a = list.get(i);
        for (int j = i + 1; j < list.size() && list.get(j).start < a.end; j++) {
          Hold b = list.get(j);
          if (a.grant().equals(b.grant())) {
            continue;
          }
          if (a.paused || b.paused) {
            explained++;
          } else {
            overlaps++;
            if (firstOverlap == null) {
              firstOverlap = describe(a, runBegin) + " and " + describe(b, runBegin);
            }
          }
        }
      }
    }
    if (overlaps > 0) {
      failures.add(
          overlaps
              + " overlapping hold(s) not explained by a pause past the lease (first: "
              + firstOverlap
              + ")");
    }

    // Liveness: a lock free by every holder's account while someone waits for it. Only a holder
    // the server still counts (one killed, stopped, cut off or releasing) explains that, and only
    // until the next-grant bound; longer means a stuck lock (an orphaned queue node, a lost
    // wake-up). Gaps overlapping a backend restart are left out.
    long worstFreeWhileWaited = 0;
    String stuck = null;
    long begin = runBegin == Long.MIN_VALUE ? 0 : runBegin;
    for (Map.Entry<String, List<Hold>> lockHolds : byLock.entrySet()) {
      List<Hold> sorted = new ArrayList<>(lockHolds.getValue());
      sorted.sort(Comparator.comparingLong(h -> h.start));
      List<long[]> gaps = new ArrayList<>();
      long covered = begin;
      for (Hold h : sorted) {
        if (h.start > covered) {
          gaps.add(new long[] {covered, h.start});
        }
        covered = Math.max(covered, h.end);
      }
      gaps.add(new long[] {covered, lastEvent});
      for (long[] gap : gaps) {
        boolean duringRestart =
            restartWindows.stream().anyMatch(w -> gap[0] <= w[1] && gap[1] >= w[0]);
        if (duringRestart) {
          continue;
        }
        for (Object[] w : waits) {
          if (!w[0].equals(lockHolds.getKey()) || (long) w[1] > gap[0]) {
            continue;
          }
          // A waiter cut off cannot be granted meanwhile: only the time it could be counts.
          long freeWhileWaited =
              longestOutside(
                  gap[0],
                  Math.min(gap[1], (long) w[2]),
                  waiterCuts.getOrDefault((String) w[3], List.of()));
          if (freeWhileWaited > worstFreeWhileWaited) {
            worstFreeWhileWaited = freeWhileWaited;
            stuck = lockHolds.getKey();
          }
        }
      }
    }
    if (worstFreeWhileWaited > nextGrantBound.toNanos()) {
      failures.add(
          stuck
              + " was free for "
              + millis(worstFreeWhileWaited)
              + " ms while a worker waited for it, over the bound of "
              + nextGrantBound.toMillis()
              + " ms");
    }

    // Tokens: a grant that began after another ended must carry a greater token, and no token is
    // given to two grants. Holds of one shared grant carry its token by design; such a hold must
    // have been asked for while the grant could still live on the server: before its last earlier
    // hold was released, or, once a hold of it ended without a confirmed release (its count stays
    // on the server while any holder renews), until a lease and a renewal after the last hold
    // ended.
    int tokenViolations = 0;
    long grace = settings.lease().toNanos() + settings.renewal().toNanos();
    for (List<Hold> list : byLock.values()) {
      List<Hold> byEnd = new ArrayList<>(list);
      byEnd.sort(Comparator.comparingLong(h -> h.end));
      // The greatest token among ended holds, and the greatest of another grant than that one's.
      long bestToken = Long.MIN_VALUE;
      Object bestGrant = null;
      long otherToken = Long.MIN_VALUE;
      int p = 0;
      Map<Long, Object> grantOfToken = new HashMap<>();
      Map<Object, long[]> grantLife = new HashMap<>(); // {last true release, last end, unresolved}
      for (Hold b : list) { // by start
        while (p < byEnd.size() && byEnd.get(p).end < b.start) {
          Hold ended = byEnd.get(p++);
          if (ended.grant().equals(bestGrant)) {
            bestToken = Math.max(bestToken, ended.token);
          } else if (ended.token > bestToken) {
            otherToken = bestToken;
            bestToken = ended.token;
            bestGrant = ended.grant();
          } else {
            otherToken = Math.max(otherToken, ended.token);
          }
        }
        long bound = b.grant().equals(bestGrant) ? otherToken : bestToken;
        if (b.token <= bound) {
          tokenViolations++;
        }
        Object earlier = grantOfToken.putIfAbsent(b.token, b.grant());
        if (earlier != null && !earlier.equals(b.grant())) {
          tokenViolations++; // one token, two grants
        } else if (earlier != null && b.acquiringAt > livesUntil(grantLife.get(b.grant()), grace)) {
          tokenViolations++; // a grant that ended was given again
        }
        long[] life = grantLife.computeIfAbsent(b.grant(), g -> new long[3]);
        if ("true".equals(b.releaseResult)) {
          life[0] = Math.max(life[0], b.releasedAt);
        } else {
          life[2] = 1;
        }
        life[1] = Math.max(life[1], b.end);
      }
    }
    if (tokenViolations > 0) {
      failures.add(tokenViolations + " fencing token(s) not strictly increasing");
    }
    if (staleAccepted > 0) {
      failures.add(staleAccepted + " stale write(s) accepted by the fenced register");
    }
    if (lostUpdates > 0 && !scenario.breaksLeaseAssumption()) {
      failures.add(lostUpdates + " lost update(s) on the unfenced register without a long pause");
    }

    // Time from a fault on a holder to the next grant of its lock.
    List<Long> toNextGrant = new ArrayList<>();
    for (Event f : faultEvents) {
      if (f.kind() != Event.Kind.KILL
          && !(f.kind() == Event.Kind.STOP && scenario == Scenario.PAUSE)
          && f.kind() != Event.Kind.CUT_BEGIN) {
        continue;
      }
      long next =
          holds.stream()
              .filter(h -> h.lock.equals(f.lock()) && h.start > f.nanos())
              .mapToLong(h -> h.start)
              .min()
              .orElse(Long.MAX_VALUE);
      if (next == Long.MAX_VALUE) {
        failures.add("no grant of " + f.lock() + " after the " + f.kind() + " of " + f.detail());
      } else {
        toNextGrant.add(next - f.nanos());
      }
    }
    long worstNextGrant = toNextGrant.stream().mapToLong(Long::longValue).max().orElse(-1);
    if (worstNextGrant > nextGrantBound.toNanos()) {
      failures.add(
          "next grant after a fault took "
              + millis(worstNextGrant)
              + " ms, over the bound of "
              + nextGrantBound.toMillis()
              + " ms");
    }

    // A paused holder is told of its loss within one renewal interval after it resumes, and its
    // late release does not free anyone else's lock.
    List<Long> resumeToLoss = new ArrayList<>();
    int lateReleasesThatFreed = 0;
    if (scenario == Scenario.PAUSE) {
      for (Event cont : faultEvents) {
        if (cont.kind() != Event.Kind.CONT) {
          continue;
        }
        for (Hold h : bySource.getOrDefault(cont.detail(), List.of())) {
          if (!h.paused || h.start > cont.nanos() || h.end < cont.nanos() - pauseNanos()) {
            continue;
          }
          long told = h.lostAt;
          if ("false".equals(h.releaseResult)) {
            told = Math.min(told, h.releasedAt);
          }
          if (told == Long.MAX_VALUE) {
            failures.add(h.source + " was paused holding " + h.lock + " and never told of loss");
          } else {
            resumeToLoss.add(Math.max(0, told - cont.nanos()));
          }
          if ("true".equals(h.releaseResult)) {
            boolean someoneElse =
                holds.stream()
                    .anyMatch(
                        o ->
                            !o.grant().equals(h.grant())
                                && o.lock.equals(h.lock)
                                && o.start > h.start
                                && o.start < h.releasedAt);
            if (someoneElse) {
              lateReleasesThatFreed++;
            }
          }
        }
      }
    }
    long worstResumeToLoss = resumeToLoss.stream().mapToLong(Long::longValue).max().orElse(-1);
    if (worstResumeToLoss > settings.renewal().toNanos()) {
      failures.add(
          "a resumed holder learned of its loss after "
              + millis(worstResumeToLoss)
              + " ms, over one renewal interval ("
              + settings.renewal().toMillis()
              + " ms)");
    }

    // A holder cut off from the backend is told of its loss (unless it released first: its
    // release then fails, and is reported as not done).
    List<Long> cutToLoss = new ArrayList<>();
    long lease = settings.lease().toNanos();
    for (Event cut : faultEvents) {
      if (cut.kind() != Event.Kind.CUT_BEGIN) {
        continue;
      }
      for (Hold h : bySource.getOrDefault(cut.detail(), List.of())) {
        if (!h.lock.equals(cut.lock()) || !h.contains(cut.nanos())) {
          continue;
        }
        if (h.lostAt != Long.MAX_VALUE) {
          cutToLoss.add(h.lostAt - cut.nanos());
        } else if (h.end > cut.nanos() + lease) {
          failures.add(h.source + " was cut off holding " + h.lock + " and never told of loss");
        }
      }
    }
    // How soon is reported, not judged here: the promise is to be told before anyone else is
    // granted the lock, and a later signal shows up as an overlapping hold above.
    long worstCutToLoss = cutToLoss.stream().mapToLong(Long::longValue).max().orElse(-1);
    if (lateReleasesThatFreed > 0) {
      failures.add(lateReleasesThatFreed + " late release(s) freed a lock another had taken");
    }

    // Loss signals that no fault explains. With shared owner ids, a fault on a worker of the same
    // owner id explains it too: the grant may live in that worker's session (ZooKeeper).
    Map<String, String> ownerOf = new HashMap<>();
    holds.stream().filter(h -> h.owner != null).forEach(h -> ownerOf.put(h.source, h.owner));
    int losses = 0;
    int spurious = 0;
    for (Hold h : holds) {
      if (h.lostAt == Long.MAX_VALUE) {
        continue;
      }
      losses++;
      boolean explainedLoss =
          faultEvents.stream()
                  .anyMatch(
                      f ->
                          sharesGrantWith(h, f.detail(), ownerOf)
                              && (f.kind() == Event.Kind.KILL
                                  || f.kind() == Event.Kind.CUT_BEGIN
                                  || (f.kind() == Event.Kind.STOP && scenario == Scenario.PAUSE))
                              && f.nanos() <= h.lostAt
                              && f.nanos() >= h.start - settings.lease().toNanos())
              || forcedHolds.contains(h)
              || restartWindows.stream().anyMatch(w -> h.start <= w[1] && h.lostAt >= w[0]);
      if (!explainedLoss) {
        spurious++;
      }
    }
    if (spurious > 0) {
      failures.add(spurious + " spurious loss signal(s)");
    }

    // Nothing is lost: every release a live worker began was answered, done or reported not done.
    long unanswered =
        holds.stream()
            .filter(h -> h.releasedAt == Long.MAX_VALUE && !killed.contains(h.source))
            .count();
    if (unanswered > 0) {
      failures.add(unanswered + " release(s) by live workers never answered");
    }

    int grants = holds.size();
    if (grants < 3) {
      failures.add("only " + grants + " grant(s): the run proved nothing");
    }
    if (faultsInjected == 0 && scenario != Scenario.CALM && scenario != Scenario.CLOCK_OFFSET) {
      failures.add("no fault was injected");
    }
    long duration = (runEnd == Long.MAX_VALUE ? lastEvent : runEnd) - runBegin;
    return new RunResult(
        backend,
        scenario,
        Duration.ofNanos(Math.max(0, duration)),
        grants,
        noGrant,
        faultsInjected,
        overlaps,
        explained,
        staleAccepted,
        fencedRejections,
        lostUpdates,
        tokenViolations,
        toNextGrant.size(),
        toNextGrant.stream()
            .mapToLong(Long::longValue)
            .sorted()
            .skip(toNextGrant.size() / 2)
            .findFirst()
            .orElse(-1),
        worstNextGrant,
        nextGrantBound,
        scenario == Scenario.PARTITION ? cutToLoss.size() : resumeToLoss.size(),
        scenario == Scenario.PARTITION ? worstCutToLoss : worstResumeToLoss,
        scenario == Scenario.PARTITION ? settings.lease() : settings.renewal(),
        losses,
        spurious,
        releaseErrors,
        worstFreeWhileWaited,
        failures);
  }

  private long pauseNanos() {
    return settings.lease().multipliedBy(2).toNanos();
  }

  /** A hold for a failure message: who, which token, when (ms into the run). */
  private static String describe(Hold h, long runBegin) {
    long t0 = runBegin == Long.MIN_VALUE ? 0 : runBegin;
    return h.source
        + (h.owner == null ? "" : " (owner " + h.owner + ")")
        + " token "
        + h.token
        + " on "
        + h.lock
        + " from "
        + millis(h.start - t0)
        + " to "
        + millis(h.end - t0)
        + " ms";
  }

  private static boolean sharesGrantWith(Hold h, String victim, Map<String, String> ownerOf) {
    return h.source.equals(victim) || (h.owner != null && h.owner.equals(ownerOf.get(victim)));
  }

  /** The longest piece of [from, to] outside the given windows. */
  static long longestOutside(long from, long to, List<long[]> windows) {
    long longest = 0;
    long pieceStart = from;
    List<long[]> sorted = new ArrayList<>(windows);
    sorted.sort(Comparator.comparingLong(w -> w[0]));
    for (long[] w : sorted) {
      if (w[1] < pieceStart || w[0] > to) {
        continue;
      }
      longest = Math.max(longest, Math.min(w[0], to) - pieceStart);
      pieceStart = Math.max(pieceStart, w[1]);
    }
    return Math.max(longest, to - pieceStart);
  }

  /**
   * The hold number a worker writes in a grant's and a loss signal's detail ({@code #12}), or ""
   * when there is none (the probe, older histories): then every signal belongs to the open hold.
   */
  static String holdNumber(String detail) {
    for (String word : detail.split(" ")) {
      if (word.startsWith("#")) {
        return word;
      }
    }
    return "";
  }

  private static long livesUntil(long[] life, long grace) {
    return life[2] == 1 ? Math.max(life[0], satAdd(life[1], grace)) : life[0];
  }

  private static long satAdd(long a, long b) {
    long r = a + b;
    return r < a ? Long.MAX_VALUE : r;
  }

  static long millis(long nanos) {
    return Math.round(nanos / 1e6);
  }
}
