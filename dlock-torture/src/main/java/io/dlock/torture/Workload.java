package io.dlock.torture;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What the workers of a lock run do. The history they write has one shape whatever they do (a hold
 * is a grant, a term, or a grant of permits), so that the same criteria judge them all where they
 * hold (a semaphore's own replace those that assume one holder at a time, see {@link Checker}); the
 * words of the report differ.
 */
enum Workload {
  /**
   * Workers contend for a few locks and work on the registers inside each hold ({@link Worker}).
   */
  LOCK(Worker.class.getName(), "hold", "token", "next grant"),
  /**
   * Workers are candidates in one election; the leader works on the registers with its term's epoch
   * until it resigns or its term is revoked, then competes again ({@link CandidateWorker}).
   */
  ELECTION(CandidateWorker.class.getName(), "term", "epoch", "new leader"),
  /**
   * Workers take permits of one semaphore of {@link RunSettings#permits()} permits (mostly one at a
   * time, sometimes two), work on the registers with the permit's token while they hold it, and
   * release ({@link PermitWorker}). A permit is a hold of the semaphore; up to its bound may be
   * held at once.
   */
  SEMAPHORE(PermitWorker.class.getName(), "permit", "token", "permit back");

  private final String mainClass;
  private final String hold;
  private final String token;
  private final String nextGrant;

  Workload(String mainClass, String hold, String token, String nextGrant) {
    this.mainClass = mainClass;
    this.hold = hold;
    this.token = token;
    this.nextGrant = nextGrant;
  }

  /** The worker processes' main class. */
  String mainClass() {
    return mainClass;
  }

  /** What a hold is, in the report's words: {@code hold} or {@code term}. */
  String hold() {
    return hold;
  }

  /** What a hold's fencing token is: {@code token} or {@code epoch}. */
  String token() {
    return token;
  }

  /** What the time after a fault is measured to: {@code next grant} or {@code new leader}. */
  String nextGrant() {
    return nextGrant;
  }

  String id() {
    return name().toLowerCase(Locale.ROOT);
  }

  static Workload of(String id) {
    for (Workload w : values()) {
      if (w.id().equals(id)) {
        return w;
      }
    }
    throw new IllegalArgumentException(
        "workload must be lock, election or semaphore, got '" + id + "'");
  }

  /**
   * Why this workload does not run on {@code target}, or null if it does. An election takes no
   * owner id (candidates sharing one would lead together), nor does a permit (never shared); the
   * lock workload's own negative controls misbehave in lock calls the others do not make ({@code
   * redis-volatile}, a backend that breaks its own assumption, is every workload's negative
   * control); and a semaphore needs a backend with semaphores (its client asked once).
   */
  String unsupportedOn(Target target) {
    if (this == LOCK) {
      return null;
    }
    if (target.ledger()) {
      return "an idempotency store has no " + id();
    }
    if (target.sharedOwnerIds()) {
      return this == ELECTION ? "an election takes no owner id" : "a permit is never shared";
    }
    if (target instanceof ControlTarget) {
      return "a negative control of the lock workload (its workers misbehave in lock calls)";
    }
    if (this == SEMAPHORE) {
      return PermitWorker.unsupportedOn(target);
    }
    return null;
  }

  /** Whether {@code scenario} means something for this workload (the target's say comes apart). */
  boolean applies(Scenario scenario) {
    if (this == LOCK) {
      return true;
    }
    return switch (scenario) {
        // A client of the coordinator's waits for a lock of its own: no candidate is involved. A
        // permit worker's client closed under its permit is not built yet (docs/safety.md).
      case WAITER_PARTITION, DROPPED_REPLIES -> false;
      case CLIENT_CLOSE -> this == ELECTION;
      default -> true;
    };
  }

  /**
   * The scenarios a soak runs for this workload on {@code target} when none are named: the target's
   * own that apply, and for an election or a semaphore on a target with the classic faults, a term
   * or permit deleted under its holder (force-release: the lock workload runs it with shared owner
   * ids only, these need none).
   */
  List<Scenario> defaultScenarios(Target target) {
    List<Scenario> mine =
        new ArrayList<>(target.defaultScenarios().stream().filter(this::applies).toList());
    if (this != LOCK && mine.contains(Scenario.KILL) && !mine.contains(Scenario.FORCE_RELEASE)) {
      mine.add(Scenario.FORCE_RELEASE);
    }
    return mine;
  }
}
