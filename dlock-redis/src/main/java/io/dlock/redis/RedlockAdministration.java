package io.dlock.redis;

import io.dlock.LockInfo;
import io.dlock.spi.LockAdministration;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Redlock's inspection and forced release ({@code dlock status}, {@code dlock release --force}, the
 * Actuator endpoint): every master asked, a lock judged held where a majority of all masters hold
 * it, and a call that fewer than a majority answer failed rather than answered from the rest.
 */
final class RedlockAdministration implements LockAdministration {
  private final RedlockLockBackend backend;

  RedlockAdministration(RedlockLockBackend backend) {
    this.backend = backend;
  }

  /**
   * For the administrative calls: every master, each bounded by its command timeout, a master still
   * connecting waited for ({@link RedlockMaster#callOnceConnected}).
   */
  private <T> CompletableFuture<List<@Nullable T>> onEveryMasterConnected(
      Function<RedisLockBackend, CompletableFuture<T>> call) {
    Duration timeout = RedlockMaster.commandTimeout(backend.settings());
    return backend.askEveryMaster(master -> master.callOnceConnected(call, timeout));
  }

  /**
   * Lists on every master, each bounded by its command timeout (at least 1 s), not the node timeout
   * (a listing scans the master's keyspace and reads each lock), and a master still connecting
   * waited for: a client that had just started (with a majority of masters up) listed a lock held
   * on the master still connecting and one other as free (CI33: `dlock status` said "No locks held"
   * while one was). Fewer answers than a quorum fail the listing: a lock held by a majority could
   * be among the missing.
   */
  @Override
  public CompletableFuture<List<LockInfo>> inspect(String namePattern) {
    return onEveryMasterConnected(m -> m.inspect(namePattern))
        .thenApply(
            answers -> {
              backend.requireQuorum(answers, "the listing of '" + namePattern + "'");
              Map<String, List<LockInfo>> byName = new HashMap<>();
              for (List<LockInfo> answer : answers) {
                if (answer != null) {
                  answer.forEach(
                      i -> byName.computeIfAbsent(i.name(), n -> new ArrayList<>()).add(i));
                }
              }
              // A lock is held where a majority of masters hold it.
              return byName.values().stream()
                  .filter(infos -> infos.size() >= backend.quorum())
                  .map(
                      infos ->
                          infos.stream()
                              .max(java.util.Comparator.comparingLong(LockInfo::fencingToken))
                              .orElseThrow())
                  .sorted(java.util.Comparator.comparing(LockInfo::name))
                  .toList();
            });
  }

  /**
   * Deletes the lock on every master, each bounded by its command timeout as a listing is; fewer
   * answers than a quorum fail it (reported as not done: the lock may still be held by a majority).
   */
  @Override
  public CompletableFuture<Optional<LockInfo>> forceRelease(String lockName) {
    return onEveryMasterConnected(m -> m.forceRelease(lockName))
        .thenApply(
            answers -> {
              backend.requireQuorum(answers, "the forced release of '" + lockName + "'");
              return answers.stream()
                  .filter(a -> a != null && a.isPresent())
                  .map(Optional::get)
                  .max(java.util.Comparator.comparingLong(LockInfo::fencingToken));
            });
  }
}
