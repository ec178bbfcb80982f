package io.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.LeasedSemaphore;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockOptions;
import io.dlock.MonotonicClock;
import io.dlock.Permit;
import io.dlock.PermitInfo;
import io.dlock.redis.script.RedisScript;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LockOwner;
import io.dlock.spi.PermitStore;
import io.dlock.spi.ReleaseResult;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The Redis permit store's scripts against a real server: {@link RedisPermits}. */
class RedisPermitsTest {
  private static final Duration LONG = Duration.ofSeconds(30);
  private static final Duration SHORT = Duration.ofMillis(300);

  private final String prefix = "permits-" + UUID.randomUUID() + ":";
  private final RedisKeys permitKeys = new RedisKeys(prefix + "permits");
  private final String name = "sem-" + UUID.randomUUID();
  private RedisLockBackend backend;
  private PermitStore store;
  private RedisClient raw;
  private StatefulRedisConnection<String, String> connection;
  private RedisCommands<String, String> redis;

  @BeforeEach
  void connect() {
    backend = RedisLockBackend.connect(settings());
    backend.start(new BackendContext(MonotonicClock.SYSTEM, Duration.ofSeconds(5)));
    store = backend.permits().orElseThrow();
    raw = RedisClient.create(RedisTestServers.embedded().uri());
    connection = raw.connect();
    redis = connection.sync();
  }

  private RedisLockSettings settings() {
    return RedisLockSettings.of(RedisTestServers.embedded().uri()).withKeyPrefix(prefix);
  }

  @AfterEach
  void close() {
    backend.close();
    List<String> left = redis.keys(prefix + "*");
    if (!left.isEmpty()) {
      redis.del(left.toArray(new String[0]));
    }
    connection.close();
    raw.shutdown();
  }

  private AcquireResult acquire(int permits, int count, LockOwner owner, Duration lease)
      throws Exception {
    return store.tryAcquire(name, permits, count, owner, lease).get(5, TimeUnit.SECONDS);
  }

  private long granted(int permits, int count, LockOwner owner, Duration lease) throws Exception {
    AcquireResult result = acquire(permits, count, owner, lease);
    assertThat(result).isInstanceOf(AcquireResult.Granted.class);
    assertThat(((AcquireResult.Granted) result).holdCount()).isEqualTo(1);
    return ((AcquireResult.Granted) result).fencingToken();
  }

  private static LockOwner owner() {
    return LockOwner.ofGrant(UUID.randomUUID().toString());
  }

  @Test
  void concurrentRequestsNeverHoldMoreThanTheBound() throws Exception {
    List<CompletableFuture<AcquireResult>> all = new ArrayList<>();
    for (int i = 0; i < 40; i++) {
      all.add(store.tryAcquire(name, 7, 1 + i % 3, owner(), LONG));
    }
    int held = 0;
    List<Long> tokens = new ArrayList<>();
    for (int i = 0; i < all.size(); i++) {
      if (all.get(i).get(5, TimeUnit.SECONDS) instanceof AcquireResult.Granted granted) {
        held += 1 + i % 3;
        tokens.add(granted.fencingToken());
      }
    }
    assertThat(held).isBetween(5, 7); // the sum of counts; a few never fit the last room
    assertThat(tokens).doesNotHaveDuplicates();
    List<PermitInfo> holders = store.holders(name).get(5, TimeUnit.SECONDS);
    assertThat(holders.stream().mapToInt(PermitInfo::count).sum()).isEqualTo(held);
    assertThat(holders)
        .isSortedAccordingTo((a, b) -> Long.compare(a.fencingToken(), b.fencingToken()));
  }

  @Test
  void countsAboveOneShareTheBoundAndTokensGrow() throws Exception {
    long a = granted(5, 3, owner(), LONG);
    AcquireResult full = acquire(5, 3, owner(), LONG);
    assertThat(full).isInstanceOf(AcquireResult.Held.class);
    assertThat(((AcquireResult.Held) full).holderRemaining())
        .isPositive()
        .isLessThanOrEqualTo(LONG);
    long b = granted(5, 2, owner(), LONG);
    assertThat(b).isGreaterThan(a);
    // The bound is each request's own: a larger one fits where the smaller did not.
    long c = granted(8, 3, owner(), LONG);
    assertThat(c).isGreaterThan(b);
  }

  @Test
  void aRepeatedRequestKeepsItsTokenAddsNothingAndNeverShortens() throws Exception {
    LockOwner owner = owner();
    long token = granted(2, 1, owner, LONG);
    assertThat(granted(2, 1, owner, SHORT)).isEqualTo(token);
    List<PermitInfo> holders = store.holders(name).get(5, TimeUnit.SECONDS);
    assertThat(holders).hasSize(1);
    assertThat(holders.get(0).leaseRemaining()).isGreaterThan(Duration.ofSeconds(20));
    granted(2, 1, owner(), LONG); // one permit left: the repeat took none
  }

  @Test
  void releaseChecksOwnerAndToken() throws Exception {
    LockOwner owner = owner();
    long token = granted(1, 1, owner, LONG);
    assertThat(store.release(name, owner(), token).get()).isEqualTo(ReleaseResult.NOT_HELD);
    assertThat(store.release(name, owner, token + 1).get()).isEqualTo(ReleaseResult.NOT_HELD);
    assertThat(store.holders(name).get()).hasSize(1);
    assertThat(store.release(name, owner, token).get()).isEqualTo(ReleaseResult.RELEASED);
    assertThat(store.release(name, owner, token).get()).isEqualTo(ReleaseResult.NOT_HELD);
    assertThat(redis.exists(permitKeys.lock(name), permitKeys.lock(name) + ":grants")).isZero();
  }

  @Test
  void leasesEndOnTheServerAndTheKeysVanishButTheCounterStays() throws Exception {
    long first = granted(1, 1, owner(), SHORT);
    assertThat(redis.pttl(permitKeys.lock(name))).isPositive().isLessThanOrEqualTo(300);
    assertThat(redis.pttl(permitKeys.lock(name) + ":grants")).isPositive();
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> redis.exists(permitKeys.lock(name), permitKeys.lock(name) + ":grants") == 0);
    assertThat(redis.get(permitKeys.fenceCounter(name))).isEqualTo(Long.toString(first));
    assertThat(redis.ttl(permitKeys.fenceCounter(name))).isEqualTo(-1);
    assertThat(granted(1, 1, owner(), LONG)).isGreaterThan(first);
  }

  @Test
  void renewalExtendsHeldLeasesAndReportsGoneOnes() throws Exception {
    LockOwner kept = owner();
    LockOwner released = owner();
    LockOwner ended = owner();
    long keptToken = granted(3, 1, kept, SHORT);
    long releasedToken = granted(3, 1, released, LONG);
    long endedToken = granted(3, 1, ended, Duration.ofMillis(1));
    store.release(name, released, releasedToken).get();
    await()
        .atMost(Duration.ofSeconds(2))
        .until(
            () ->
                redis.zscore(permitKeys.lock(name), ended.key()) == null
                    || redis.zscore(permitKeys.lock(name), ended.key()) < serverMillis());
    HeldLease keptLease = new HeldLease(name, kept, keptToken, LONG);
    HeldLease releasedLease = new HeldLease(name, released, releasedToken, LONG);
    HeldLease endedLease = new HeldLease(name, ended, endedToken, LONG);
    HeldLease wrongToken = new HeldLease(name, kept, keptToken + 100, LONG);
    Set<HeldLease> gone =
        store
            .renew(List.of(keptLease, releasedLease, endedLease, wrongToken))
            .get(5, TimeUnit.SECONDS);
    assertThat(gone).containsExactlyInAnyOrder(releasedLease, endedLease, wrongToken);
    assertThat(redis.pttl(permitKeys.lock(name))).isGreaterThan(20_000);
    assertThat(store.holders(name).get().get(0).leaseRemaining())
        .isGreaterThan(Duration.ofSeconds(20));
  }

  private long serverMillis() {
    List<String> time = redis.time();
    return Long.parseLong(time.get(0)) * 1000 + Long.parseLong(time.get(1)) / 1000;
  }

  @Test
  void holdersAndForceRelease() throws Exception {
    LockOwner one = owner();
    long first = granted(4, 3, one, LONG);
    long second = granted(4, 1, owner(), LONG);
    List<PermitInfo> holders = store.holders(name).get();
    assertThat(holders).extracting(PermitInfo::fencingToken).containsExactly(first, second);
    assertThat(holders).extracting(PermitInfo::count).containsExactly(3, 1);
    assertThat(holders.get(0).semaphore()).isEqualTo(name);
    assertThat(holders.get(0).heldSince()).isNotNull();
    assertThat(holders.get(0).holder()).doesNotContain(one.key());

    Optional<PermitInfo> broken = store.forceRelease(name, first).get();
    assertThat(broken).map(PermitInfo::fencingToken).contains(first);
    assertThat(broken).map(PermitInfo::count).contains(3);
    assertThat(store.forceRelease(name, first).get()).isEmpty();
    assertThat(store.holders(name).get())
        .extracting(PermitInfo::fencingToken)
        .containsExactly(second);
    assertThat(store.renew(List.of(new HeldLease(name, one, first, LONG))).get()).hasSize(1);
    assertThat(store.release(name, one, first).get()).isEqualTo(ReleaseResult.NOT_HELD);
  }

  @Test
  void aSemaphoreAndALockOfOneNameNeverMeet() throws Exception {
    LockOwner lockOwner = owner();
    assertThat(backend.tryAcquire(name, lockOwner, LONG).get())
        .isInstanceOf(AcquireResult.Granted.class);
    granted(1, 1, owner(), LONG);
    assertThat(backend.inspect(name).get()).hasSize(1);
    assertThat(backend.forceRelease(name).get()).isPresent();
    assertThat(store.holders(name).get()).hasSize(1);
    assertThat(redis.exists(prefix + "{" + name + "}")).isZero();
    assertThat(redis.keys(prefix + "permits{" + name + "}*")).isNotEmpty();
  }

  @Test
  void aReleaseWakesAWaiterLongBeforeTheLeaseEnds() throws Exception {
    try (LockClient holderClient = client();
        LockClient waiterClient = client()) {
      LockOptions options = LockOptions.defaults().withFixedLease(LONG);
      LeasedSemaphore held = holderClient.semaphore(name, 1, options);
      LeasedSemaphore waited = waiterClient.semaphore(name, 1, options);
      Permit permit = held.tryAcquire().orElseThrow();
      CompletableFuture<Permit> waiting = waited.acquireAsync(1, LONG);
      // Waits past the first attempt, so the release is what wakes it.
      await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> redis.hget(permitKeys.lock(name) + ":grants", "waiters") != null);
      assertThat(waiting).isNotDone();
      permit.release();
      Permit next = waiting.get(5, TimeUnit.SECONDS);
      assertThat(next.fencingToken()).isGreaterThan(permit.fencingToken());
      next.release();
    }
  }

  private LockClient client() {
    return LockClients.create(RedisLockBackend.connect(settings()), LockClientOptions.defaults());
  }

  @Test
  void reSentScriptsAnswerAsTheFirstRunAndTheUndoTakesBackOnlyItsOwnRequest() throws Exception {
    RedisScript acquire =
        RedisScript.load(RedisPermits.class, "permit-acquire.lua", ScriptOutputType.MULTI, redis);
    RedisScript release =
        RedisScript.load(RedisPermits.class, "permit-release.lua", ScriptOutputType.MULTI, redis);
    RedisScript undo =
        RedisScript.load(
            RedisPermits.class, "permit-undo-acquire.lua", ScriptOutputType.MULTI, redis);
    String leases = permitKeys.lock(name);
    String grants = leases + ":grants";
    String owner = "t:replayed";
    List<Object> first = acquireScript(acquire, owner, "r1");
    assertThat(acquireScript(acquire, owner, "r1")).isEqualTo(first);
    assertThat(redis.hlen(grants)).isEqualTo(1);

    String[] releaseKeys = {leases, grants, permitKeys.request(name, "r2")};
    String token = first.get(1).toString();
    assertThat(release.<List<Object>>call(redis, releaseKeys, owner, token, "ch", "10000"))
        .containsExactly(1L);
    assertThat(release.<List<Object>>call(redis, releaseKeys, owner, token, "ch", "10000"))
        .containsExactly(1L);

    // A later attempt of the same acquisition touched the grant: the undo of the first leaves it.
    acquireScript(acquire, owner, "r3");
    acquireScript(acquire, owner, "r4");
    assertThat(undo.<List<Object>>call(redis, new String[] {leases, grants}, owner, "r3", "ch"))
        .containsExactly(0L);
    assertThat(redis.hexists(grants, owner)).isTrue();
    assertThat(undo.<List<Object>>call(redis, new String[] {leases, grants}, owner, "r4", "ch"))
        .containsExactly(1L);
    assertThat(redis.exists(leases, grants)).isZero();
  }

  private List<Object> acquireScript(RedisScript acquire, String owner, String request) {
    return acquire.call(
        redis,
        new String[] {
          permitKeys.lock(name),
          permitKeys.lock(name) + ":grants",
          permitKeys.fenceCounter(name),
          permitKeys.request(name, request)
        },
        owner,
        "2",
        "1",
        "30000",
        request,
        "1700000000000",
        "test-host/1/main",
        "10000");
  }
}
