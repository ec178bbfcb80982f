package io.dlock.torture;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A run's merged history, read once into what the criteria judge: the holds (an election's terms
 * among them: {@code ELECTED} begins one, {@code REVOKED} ends it), the waits for a lock (a
 * candidate's competing among them), the windows in which a fault explains what the clients saw,
 * and the registers' counts. Which holds a fault explains is decided here too (a pause past the
 * lease, a forced release), because more than one criterion excuses those holds.
 */
final class RunHistory {
  /** A client waiting for a lock, from its {@code ACQUIRING} to its answer or the history's end. */
  record Wait(String lock, long start, long end, String source) {}

  final List<Hold> holds = new ArrayList<>();
  final Map<String, List<Hold>> bySource = new HashMap<>();

  /** What the workers did: held locks, or led an election (a term is a hold of its lock). */
  final Workload workload;

  /** Every lock's holds, each list by start. */
  final Map<String, List<Hold>> byLock = new HashMap<>();

  final List<Wait> waits = new ArrayList<>();

  /** A waiting client's cuts, by its source: {begin, end}, end Long.MAX_VALUE while open. */
  final Map<String, List<long[]>> waiterCuts = new HashMap<>();

  /** The events of the fault injector alone. */
  final List<Event> faultEvents;

  /** The whole history, in order, for the criteria that read kinds of their own. */
  final List<Event> events;

  /** Clients closed under a hold ({@code CLOSE_BEGIN}), by the lock held. */
  final Map<String, List<Long>> closesByLock = new HashMap<>();

  /** The same closes, by the worker whose client closed. */
  final Map<String, List<Long>> closesBySource = new HashMap<>();

  /**
   * Backend restarts and members cut off from the others: {begin, end plus two leases}, while
   * clients may legitimately lose grants and wait.
   */
  final List<long[]> restartWindows = new ArrayList<>();

  /** Holds of a grant deleted behind their backs by a forced release. */
  final List<Hold> forcedHolds = new ArrayList<>();

  /** The workers killed, whose releases nobody answers. */
  final Set<String> killed = new HashSet<>();

  private long runBegin = Long.MIN_VALUE;
  private long runEnd = Long.MAX_VALUE;
  private long lastEvent = 0;
  private int noGrants;
  private int releaseErrors;
  private int lostUpdates;
  private int staleAccepted;
  private int fencedRejections;

  RunHistory(RunSettings settings, List<Event> history) {
    this.events = List.copyOf(history);
    this.workload = settings.workload();
    Map<String, Hold> open = new HashMap<>(); // source|lock|token -> hold
    Map<String, long[]> openWaits = new HashMap<>(); // source|lock -> {start}
    Map<String, Long> acquiring = new HashMap<>(); // source|lock -> the last ACQUIRING
    Map<String, Long> asyncGranted = new HashMap<>(); // source|async id -> its future's completion
    long restartBegin = 0;
    for (Event e : history) {
      lastEvent = Math.max(lastEvent, e.nanos());
      readWait(e, openWaits);
      String key = e.source() + "|" + e.lock() + "|" + e.token();
      if (e.kind() == Event.Kind.ACQUIRING) {
        acquiring.put(e.source() + "|" + e.lock(), e.nanos());
      }
      if (e.kind() == Event.Kind.ASYNC_END && e.detail().endsWith(" granted")) {
        asyncGranted.put(e.source() + "|" + e.detail().split(" ")[0], e.nanos());
      }
      switch (e.kind()) {
        case RUN_BEGIN -> runBegin = e.nanos();
        case RUN_END -> runEnd = e.nanos();
        case GRANT, ELECTED -> {
          String owner =
              settings.sharedOwnerIds() && e.detail().startsWith("owner ")
                  ? e.detail().substring("owner ".length()).split(" ")[0]
                  : null;
          Hold h = new Hold(e.source(), e.lock(), e.token(), grantedAt(e, asyncGranted), owner);
          h.number = holdNumber(e.detail());
          h.count = PermitWorker.count(e.detail());
          h.acquiringAt = acquiring.getOrDefault(e.source() + "|" + e.lock(), e.nanos());
          holds.add(h);
          open.put(key, h);
          bySource.computeIfAbsent(e.source(), s -> new ArrayList<>()).add(h);
        }
        case NO_GRANT -> noGrants++;
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
        case REVOKED -> {
          // A term's end as its candidate is told it: a loss unless it resigned; nothing follows.
          Hold h = open.get(key);
          if (h != null && h.number.equals(holdNumber(e.detail()))) {
            open.remove(key);
            h.end = Math.min(h.end, e.nanos());
            h.releasedAt = e.nanos();
            h.releaseResult = "revoked " + revocationReason(e.detail());
            if (!revocationReason(e.detail()).equals("RESIGNED")) {
              h.lostAt = Math.min(h.lostAt, e.nanos());
            }
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
          // the ensemble elects, sessions move, and grants may wait for it.
        case RESTART_BEGIN, MEMBER_CUT_BEGIN -> restartBegin = e.nanos();
          // A delay beyond the backend's per-call bound (token 1) is all its servers down.
        case DELAY_BEGIN -> restartBegin = e.token() == 1 ? e.nanos() : restartBegin;
        case DELAY_END -> {
          if (e.token() == 1) {
            restartWindows.add(
                new long[] {restartBegin, e.nanos() + settings.lease().toNanos() * 2});
          }
        }
        case CLOSE_BEGIN -> {
          closesByLock.computeIfAbsent(e.lock(), k -> new ArrayList<>()).add(e.nanos());
          closesBySource.computeIfAbsent(e.source(), k -> new ArrayList<>()).add(e.nanos());
        }
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
      waits.add(new Wait(lock, o.getValue()[0], lastEvent, source));
    }
    faultEvents = history.stream().filter(e -> e.source().equals("faults")).toList();
    if (settings.scenario() == Scenario.PAUSE) {
      markPaused();
    }
    markForcedReleases();
    if (settings.sharedOwnerIds()) {
      readCancelledAsks(history);
    }
    holds.forEach(h -> byLock.computeIfAbsent(h.lock, k -> new ArrayList<>()).add(h));
    byLock.values().forEach(list -> list.sort(Comparator.comparingLong(h -> h.start)));
  }

  /** Waits for a lock, and the cuts of a waiting client, which the stuck-lock criterion needs. */
  private void readWait(Event e, Map<String, long[]> openWaits) {
    if (e.kind() == Event.Kind.ACQUIRING) {
      openWaits.put(e.source() + "|" + e.lock(), new long[] {e.nanos()});
    } else if (e.kind() == Event.Kind.GRANT
        || e.kind() == Event.Kind.ELECTED
        || e.kind() == Event.Kind.NO_GRANT
        || e.kind() == Event.Kind.CANCEL) {
      // A cancelled acquisition waits no more, whatever cancel returned (a grant that came first is
      // its worker's next GRANT, a hold).
      long[] w = openWaits.remove(e.source() + "|" + e.lock());
      if (w != null) {
        waits.add(new Wait(e.lock(), w[0], e.nanos(), e.source()));
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
  }

  /** A hold its worker was stopped in (long pauses only) outlived its lease without knowing it. */
  private void markPaused() {
    for (Event e : faultEvents) {
      if (e.kind() == Event.Kind.STOP) {
        bySource.getOrDefault(e.detail(), List.of()).stream()
            .filter(h -> h.contains(e.nanos()))
            .forEach(h -> h.paused = true);
      }
    }
  }

  /**
   * A forced release deletes a grant behind its holders' backs: they learn of it at their next
   * renewal, and meanwhile others may be granted the lock (as after a pause). Every hold of the
   * deleted grant (its lock and token, whichever process holds it) is marked.
   */
  private void markForcedReleases() {
    for (Event f : faultEvents) {
      if (f.kind() != Event.Kind.FORCE_RELEASE) {
        continue;
      }
      Set<Long> tokens = new HashSet<>();
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
  }

  /**
   * The times from the run's begin to its last event when none of {@code lock}'s holds held it,
   * each {begin, end}, in order.
   */
  /**
   * When the hold of {@code grant} began: when its acquisition returned. For an asynchronous one,
   * when its future completed, which may be well before the worker took the lease from it (its
   * cancel came later and lost): the lease was the client's from then on (found by the first soak
   * of shared owner ids with the async workload: a grant taken from its future after a forced
   * release and a newer grant seemed to begin after that grant ended, with a lower token).
   */
  private static long grantedAt(Event grant, Map<String, Long> asyncGranted) {
    int at = grant.detail().indexOf(" async a");
    if (at < 0) {
      return grant.nanos();
    }
    String id = grant.detail().substring(at + " async ".length()).split(" ")[0];
    return Math.min(
        grant.nanos(), asyncGranted.getOrDefault(grant.source() + "|" + id, grant.nanos()));
  }

  List<long[]> freeGaps(String lock) {
    List<Hold> sorted = new ArrayList<>(byLock.getOrDefault(lock, List.of()));
    sorted.sort(Comparator.comparingLong(h -> h.start));
    List<long[]> gaps = new ArrayList<>();
    long covered = origin();
    for (Hold h : sorted) {
      if (h.start > covered) {
        gaps.add(new long[] {covered, h.start});
      }
      covered = Math.max(covered, h.end);
    }
    gaps.add(new long[] {covered, lastEvent});
    return gaps;
  }

  /**
   * Whether a client closed holding {@code lock} began this gap: {@link ClientCloseCriterion}
   * judges such a gap (the next grant to another client within the bound), and no other criterion
   * counts it again.
   */
  boolean begunByAClose(String lock, long[] gap) {
    return closesByLock.getOrDefault(lock, List.of()).stream()
        .anyMatch(t -> gap[0] <= t && t <= gap[1]);
  }

  /** Whether the time from {@code from} to {@code to} meets a backend restart or member cut. */
  boolean duringRestart(long from, long to) {
    return restartWindows.stream().anyMatch(w -> from <= w[1] && to >= w[0]);
  }

  /**
   * Asynchronous acquisitions with an owner id whose cancel won ({@code CANCEL true}): by lock and
   * owner id, each {asked, cancelled plus an operation timeout}. The server may have counted such
   * an acquisition in its owner id's grant (the answer was on its way) until the client's undo, so
   * the grant may live on meanwhile, though no hold of the history shows it.
   */
  final Map<String, List<long[]>> cancelledOwnerAsks = new HashMap<>();

  private void readCancelledAsks(List<Event> history) {
    Map<String, String> ownerOf = new HashMap<>();
    holds.stream().filter(h -> h.owner != null).forEach(h -> ownerOf.put(h.source, h.owner));
    Map<String, Long> asked = new HashMap<>(); // source|id -> ACQUIRING
    long undo = Worker.OPERATION_TIMEOUT.toNanos();
    for (Event e : history) {
      if (e.kind() == Event.Kind.ACQUIRING && e.detail().startsWith("async a")) {
        asked.put(e.source() + "|" + e.detail().substring("async ".length()), e.nanos());
      } else if (e.kind() == Event.Kind.CANCEL && e.detail().startsWith("true ")) {
        Long at = asked.get(e.source() + "|" + e.detail().split(" ")[1]);
        String owner = ownerOf.get(e.source());
        if (at != null && owner != null) {
          cancelledOwnerAsks
              .computeIfAbsent(e.lock() + "|" + owner, k -> new ArrayList<>())
              .add(new long[] {at, e.nanos() + undo});
        }
      }
    }
  }

  /**
   * Whether an acquisition of {@code owner} for {@code lock}, cancelled after it may have been
   * granted, may have kept that owner id's grant alive at {@code t}.
   */
  boolean cancelledOwnerAskAt(String lock, String owner, long t) {
    return owner != null
        && cancelledOwnerAsks.getOrDefault(lock + "|" + owner, List.of()).stream()
            .anyMatch(w -> w[0] <= t && t <= w[1]);
  }

  /** Where "ms into the run" counts from: the run's begin, or 0 in a history without one. */
  long origin() {
    return runBegin == Long.MIN_VALUE ? 0 : runBegin;
  }

  /** The last moment the history tells of. */
  long lastEvent() {
    return lastEvent;
  }

  /** From the run's begin to its end, or to its last event if it did not get to end. */
  Duration duration() {
    long duration = (runEnd == Long.MAX_VALUE ? lastEvent : runEnd) - runBegin;
    return Duration.ofNanos(Math.max(0, duration));
  }

  int noGrants() {
    return noGrants;
  }

  /** Releases that threw, rather than answering done or not done. */
  int releaseErrors() {
    return releaseErrors;
  }

  /** Lost updates on the unfenced register. */
  int lostUpdates() {
    return lostUpdates;
  }

  /** Stale writes the fenced register accepted. */
  int staleAccepted() {
    return staleAccepted;
  }

  /** Reads and writes the fenced register rejected, as it should a stale token. */
  int fencedRejections() {
    return fencedRejections;
  }

  /** The reason a {@code REVOKED} event names ({@code #3 EXPIRED ...}: {@code EXPIRED}). */
  static String revocationReason(String detail) {
    String[] words = detail.split(" ");
    return words.length > 1 ? words[1] : "";
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
}
