package io.dlock.torture;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * The fenced register's check in a semaphore run: "token not revoked". A lock's fence keeps the
 * highest token it has seen and refuses lower ones, because one holder at a time is valid; a
 * semaphore's permits carry tokens that all differ and grow per grant, yet up to the bound of them
 * are valid at once, and an old permit held long stays valid while newer ones come and go. So no
 * order of tokens tells a valid permit from an ended one: the resource must ask the issuer.
 *
 * <p>So the fence asks the backend, through the coordinator's own client (never faulted), which
 * grants of the semaphore live now ({@code LeasedSemaphore.holders()}), on every entry and every
 * write, and admits a token only if it is listed. Then it remembers:
 *
 * <ul>
 *   <li>a token once listed and later not is revoked for good: a permit that ended never comes
 *       back, so a backend that forgot its grants (a restart without persistence) and lists the
 *       token again for another grant does not revive it;
 *   <li>a token seen from a second worker was given to two grants, which no backend may do: it is
 *       revoked for good, for both (the fence cannot tell which grant is the live one, so it
 *       refuses both and fails safe; found by the semaphore's negative control, where the first
 *       holder's write went through after a restart without persistence gave its token again).
 * </ul>
 *
 * A backend that cannot be asked refuses the operation (the fence fails closed). Checks run one at
 * a time, the backend's answer included: an answer older than one already applied would revoke a
 * permit granted between the two. Between the check and the write only the register's own lock is
 * taken: the window in which a permit may end unnoticed is microseconds, where a lock's fence has
 * none; {@link PermitFenceCriterion} judges every write the register accepted against the history,
 * so that window would show.
 */
final class PermitFence {
  /** The verdict on one operation: admitted ({@code ok}), or why not. */
  static final String OK = "ok";

  private final Function<String, Set<Long>> liveTokens;
  private final BiConsumer<String, Long> delisted;
  private final ReentrantLock checking = new ReentrantLock();
  private final Map<String, Set<Long>> listed = new HashMap<>();
  private final Map<String, Set<Long>> revoked = new HashMap<>();
  private final Map<String, String> workerOf = new HashMap<>(); // semaphore|token -> worker

  /**
   * @param liveTokens the tokens of the grants the backend lists for a semaphore now; throws if the
   *     backend cannot be asked
   */
  PermitFence(Function<String, Set<Long>> liveTokens) {
    this(liveTokens, (semaphore, token) -> {});
  }

  /**
   * @param delisted told, once per token and before the check answers, of each token seen listed
   *     before that the backend no longer lists: the latest time by which the server stopped
   *     counting that grant's permits ({@link PermitReturnCriterion} reads it)
   */
  PermitFence(Function<String, Set<Long>> liveTokens, BiConsumer<String, Long> delisted) {
    this.liveTokens = liveTokens;
    this.delisted = delisted;
  }

  /**
   * Whether {@code worker} may read or write {@code semaphore}'s register with {@code token}:
   * {@link #OK}, or {@code revoked}, {@code unlisted}, {@code reissued} (then revoked) or {@code
   * unavailable}. Asks the backend: call it outside the register's lock.
   */
  String check(String worker, String semaphore, long token) {
    checking.lock();
    try {
      return checkInTurn(worker, semaphore, token);
    } finally {
      checking.unlock();
    }
  }

  /**
   * Asks the backend which of {@code semaphore}'s grants live, as a check does, without an
   * operation: the coordinator calls it every {@link #POLL_EVERY} so that a grant's end is seen
   * within that long also while no worker enters the register (a holder holding for 3 s, the others
   * waiting for its permit and the victim's). Tokens listed are seen; a backend that cannot be
   * asked changes nothing.
   */
  void poll(String semaphore) {
    checking.lock();
    try {
      listing(semaphore)
          .ifPresent(live -> listed.computeIfAbsent(semaphore, s -> new HashSet<>()).addAll(live));
    } finally {
      checking.unlock();
    }
  }

  static final java.time.Duration POLL_EVERY = java.time.Duration.ofMillis(100);

  /**
   * The live tokens, noting every seen token no longer listed as delisted; empty if unavailable.
   */
  private Optional<Set<Long>> listing(String semaphore) {
    Set<Long> live;
    try {
      live = liveTokens.apply(semaphore);
    } catch (RuntimeException e) {
      return Optional.empty();
    }
    Set<Long> seen = listed.computeIfAbsent(semaphore, s -> new HashSet<>());
    Set<Long> gone = revoked.computeIfAbsent(semaphore, s -> new HashSet<>());
    for (Long t : new HashSet<>(seen)) {
      if (!live.contains(t) && gone.add(t)) {
        delisted.accept(semaphore, t);
      }
    }
    return Optional.of(live);
  }

  private String checkInTurn(String worker, String semaphore, long token) {
    Optional<Set<Long>> listing = listing(semaphore);
    if (listing.isEmpty()) {
      return "unavailable";
    }
    Set<Long> live = listing.get();
    Set<Long> seen = listed.computeIfAbsent(semaphore, s -> new HashSet<>());
    Set<Long> gone = revoked.computeIfAbsent(semaphore, s -> new HashSet<>());
    if (gone.contains(token)) {
      return "revoked";
    }
    if (!live.contains(token)) {
      // Not listed, yet never seen listed: a grant the backend does not show (yet); refused now
      // without being revoked for good.
      return "unlisted";
    }
    seen.add(token);
    String first = workerOf.putIfAbsent(semaphore + "|" + token, worker);
    if (first != null && !first.equals(worker)) {
      gone.add(token);
      return "reissued";
    }
    return OK;
  }
}
