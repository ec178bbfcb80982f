package io.dlock.torture;

import java.util.Locale;

/** A fault, injected over and over during one run. */
enum Scenario {
  /** No fault: the reference. */
  CALM("no fault", false),
  /** A holder, inside its critical section, killed with SIGKILL; a fresh worker replaces it. */
  KILL("holder killed (SIGKILL) inside its critical section", false),
  /** A holder stopped with SIGSTOP for twice its lease, then resumed with SIGCONT. */
  PAUSE("holder paused (SIGSTOP) for 2x the lease, then resumed", true),
  /** A holder stopped for a quarter of its lease: must cause no loss at all. */
  SHORT_PAUSE("holder paused (SIGSTOP) for 1/4 of the lease", false),
  /** The backend restarted while locks are held and waited for. */
  RESTART("backend restarted", false),
  /** A holder's connections to the backend silenced for twice its lease, then reset. */
  PARTITION("holder's network path to the backend cut for 2x the lease, then reset", false),
  /** A holder's connections to the backend delayed by a tenth of the lease each way. */
  DELAY("holder's network path delayed by 1/10 of the lease each way, for 2x the lease", false),
  /** Every worker's clock offset by hours (some ahead, some behind). */
  CLOCK_OFFSET("every worker's clock offset by -5 h to +7 h", false),
  /**
   * A client waiting for a lock (held by another) cut off from the backend for twice the lease
   * (longer than a ZooKeeper session, so its queue node and watch die), then healed; the lock is
   * released during the cut or right after it. The waiter must be granted the free lock within the
   * next-grant bound once it is back.
   */
  WAITER_PARTITION(
      "waiter's network path cut for 2x the lease (its session expires), then reset; the lock freed"
          + " during or after the cut",
      false),
  /**
   * Ensembles whose members each have a network of their own: one member (the leader, then a
   * follower, in turn) cut off from the other members, silently, for twice the lease, then healed;
   * clients still reach every member. A cut-off leader must stop granting, and the majority elects
   * another; no two holders at once, tokens still in order.
   */
  MEMBER_PARTITION(
      "one member (the leader, then a follower, in turn) cut off from the other members, not from"
          + " its clients, for 2x the lease, then healed",
      false),
  /**
   * Idempotency stores only: replies of the store lost at random (the request reached the server,
   * the connection is reset before the answer gets back), about every 20 ms per client.
   */
  DROPPED_REPLIES(
      "store replies dropped with a connection reset, at random, about every 20 ms per client",
      false),
  /**
   * A held lock deleted on the server (the backend's forced release), then granted again at once to
   * the holder's owner id through another client: the holder's late release and renewals must not
   * reach the newer grant. Breaks the lease assumption as a pause does: the holder learns of the
   * deletion only at its next renewal, and meanwhile others may be granted the lock.
   */
  FORCE_RELEASE(
      "held lock deleted on the server (forced release), then granted again to the holder's owner"
          + " id elsewhere",
      true),
  /**
   * A worker's client closed ({@code LockClient.close()}) while one of its threads holds a lock and
   * two more wait for it (a blocking {@code acquire} and an {@code acquireAsync}); the worker then
   * connects a new client. The waiters must end at once (refused: the client is closed), the lock
   * must go to another client within the next-grant bound, and nothing may be granted to the closed
   * client.
   */
  CLIENT_CLOSE(
      "a worker's client closed while it holds a lock and two of its threads (blocking, async)"
          + " wait for it; a new client follows",
      false);

  /** The scenarios of every backend in its default mode. */
  static final java.util.List<Scenario> CLASSIC =
      java.util.List.of(CALM, KILL, PAUSE, SHORT_PAUSE, RESTART, PARTITION, DELAY, CLOCK_OFFSET);

  /**
   * What a soak runs on a lock backend when no scenario is named: the classic ones, waiters, and a
   * client closed under its holds and waiters.
   */
  static final java.util.List<Scenario> SOAK =
      java.util.stream.Stream.concat(
              CLASSIC.stream(), java.util.stream.Stream.of(WAITER_PARTITION, CLIENT_CLOSE))
          .toList();

  private final String description;
  private final boolean breaksLeaseAssumption;

  Scenario(String description, boolean breaksLeaseAssumption) {
    this.description = description;
    this.breaksLeaseAssumption = breaksLeaseAssumption;
  }

  String description() {
    return description;
  }

  /**
   * Whether the fault breaks the assumption every lease-based lock rests on: that a holder does not
   * stall longer than its lease without noticing. Overlapping holds and lost updates on the
   * unfenced register are then expected; the fenced register must still reject every stale write.
   */
  boolean breaksLeaseAssumption() {
    return breaksLeaseAssumption;
  }

  String id() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }

  static Scenario of(String id) {
    for (Scenario s : values()) {
      if (s.id().equals(id)) {
        return s;
      }
    }
    throw new IllegalArgumentException(
        "scenario must be one of calm, kill, pause, short-pause, restart, partition, delay,"
            + " clock-offset, waiter-partition, member-partition, force-release, dropped-replies,"
            + " client-close;"
            + " got '"
            + id
            + "'");
  }
}
