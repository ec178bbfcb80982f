package io.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockOptions;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockOwner;
import io.dlock.spi.ReleaseResult;
import io.dlock.testkit.ForwardingLockBackend;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.ToLongFunction;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Clients sharing an owner id with different leases: a renewal never shortens the lock another
 * client's hold counts on (issue 29). On one server, on Redlock (each node) here, and on Cluster in
 * {@link RedisClusterLockContractTest}.
 */
class RedisSharedOwnerLeaseTest {
  private static final Duration LONG = Duration.ofSeconds(30);
  private static final Duration SHORT = Duration.ofSeconds(2);

  /**
   * Client A holds the owner id with 30 s, client B with 2 s; B releases its hold, and a renewal of
   * B's that its renewer read before the release arrives after it (the hold count is then 1, A's).
   * Every server's lock must keep A's 30 s.
   *
   * @param pttls the remaining time of {@code lockKey} on each server
   */
  static void aLateShortRenewalLeavesTheLongHoldItsLease(
      LockBackend a, LockBackend b, String lockName, ToLongFunction<String> pttls)
      throws Exception {
    LockOwner owner = LockOwner.ofOwnerId("shared-" + UUID.randomUUID());
    AcquireResult first = a.tryAcquire(lockName, owner, LONG).get(5, TimeUnit.SECONDS);
    AcquireResult second = b.tryAcquire(lockName, owner, SHORT).get(5, TimeUnit.SECONDS);
    assertThat(first).isInstanceOf(AcquireResult.Granted.class);
    assertThat(second).isInstanceOf(AcquireResult.Granted.class);
    long token = ((AcquireResult.Granted) second).fencingToken();
    assertThat(b.release(lockName, owner, token).get(5, TimeUnit.SECONDS))
        .isEqualTo(ReleaseResult.STILL_HELD);

    Set<HeldLease> gone =
        b.renew(List.of(new HeldLease(lockName, owner, token, SHORT))).get(5, TimeUnit.SECONDS);

    assertThat(gone).isEmpty();
    assertThat(
            pttls.applyAsLong(new RedisKeys(RedisLockSettings.DEFAULT_KEY_PREFIX).lock(lockName)))
        .as("the lock's remaining time, shortest over the servers")
        .isGreaterThan(LONG.toMillis() - 5_000);
  }

  @Test
  void onOneServer() throws Exception {
    String uri = RedisTestServers.embedded().uri();
    try (RedisLockBackend a = RedisLockBackend.connect(RedisLockSettings.of(uri));
        RedisLockBackend b = RedisLockBackend.connect(RedisLockSettings.of(uri))) {
      aLateShortRenewalLeavesTheLongHoldItsLease(
          a,
          b,
          "shared-owner-" + UUID.randomUUID(),
          key -> pttl(RedisTestServers.embedded(), 0, key));
    }
  }

  /** Redlock over three databases of the shared server: three independent keyspaces, no cost. */
  @Test
  void onEveryRedlockNode() throws Exception {
    String uri = RedisTestServers.embedded().uri();
    RedlockSettings settings =
        RedlockSettings.of(IntStream.rangeClosed(1, 3).mapToObj(db -> uri + "/" + db).toList())
            .withNodeTimeout(Duration.ofSeconds(2));
    try (RedlockLockBackend a = RedlockLockBackend.connect(settings);
        RedlockLockBackend b = RedlockLockBackend.connect(settings)) {
      // A backend starts once a majority of its masters is connected, the rest in the background:
      // a master that A reached later than B would hold B's hold alone, and B's release there
      // would free it (CI29). The case is about every master holding both.
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () ->
                  a.masters().stream().allMatch(RedlockMaster::isConnected)
                      && b.masters().stream().allMatch(RedlockMaster::isConnected));
      aLateShortRenewalLeavesTheLongHoldItsLease(
          a,
          b,
          "shared-owner-" + UUID.randomUUID(),
          key ->
              IntStream.rangeClosed(1, 3)
                  .mapToLong(db -> pttl(RedisTestServers.embedded(), db, key))
                  .min()
                  .orElseThrow());
    }
  }

  /** The issue's own case, through two clients: B's renewal while both hold. */
  @Test
  void aShortLeaseRenewalLeavesALongerHoldOfTheSameOwnerIdItsLease() {
    String uri = RedisTestServers.embedded().uri();
    String name = "shared-owner-" + UUID.randomUUID();
    String ownerId = "owner-" + UUID.randomUUID();
    CountingRenewals shortBackend =
        new CountingRenewals(RedisLockBackend.connect(RedisLockSettings.of(uri)));
    try (LockClient longClient = RedisLocks.newClient(uri);
        LockClient shortClient = LockClients.create(shortBackend, LockClientOptions.defaults())) {
      Lease longLease =
          longClient
              .lock(name, LockOptions.defaults().withRenewedLease(LONG).withOwnerId(ownerId))
              .tryAcquire()
              .orElseThrow();
      Lease shortLease =
          shortClient
              .lock(name, LockOptions.defaults().withRenewedLease(SHORT).withOwnerId(ownerId))
              .tryAcquire()
              .orElseThrow();
      await().atMost(Duration.ofSeconds(5)).until(() -> shortBackend.answered.get() >= 1);

      assertThat(shortLease.isValid()).isTrue();
      assertThat(longLease.isValid()).isTrue();
      String key = new RedisKeys(RedisLockSettings.DEFAULT_KEY_PREFIX).lock(name);
      assertThat(pttl(RedisTestServers.embedded(), 0, key)).isGreaterThan(LONG.toMillis() - 5_000);
    }
  }

  static long pttl(io.dlock.testkit.server.RedisServerProcess server, int db, String key) {
    // SELECT inside a script changes the database of that script only: one call, one answer.
    String reply =
        server.command(
            "EVAL",
            "redis.call('SELECT', ARGV[1]) return redis.call('PTTL', KEYS[1])",
            "1",
            key,
            Integer.toString(db));
    return Long.parseLong(reply.trim().substring(1));
  }

  /** Counts renewals the server answered, so that the test waits for one instead of sleeping. */
  static final class CountingRenewals extends ForwardingLockBackend {
    final AtomicInteger answered = new AtomicInteger();

    CountingRenewals(LockBackend delegate) {
      super(delegate);
    }

    @Override
    public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
      return super.renew(leases).whenComplete((gone, error) -> answered.incrementAndGet());
    }
  }
}
