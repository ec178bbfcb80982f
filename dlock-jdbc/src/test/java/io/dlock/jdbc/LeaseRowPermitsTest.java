package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.PermitInfo;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LockOwner;
import io.dlock.spi.PermitStore;
import io.dlock.spi.ReleaseResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The lease-row permit store on every dialect, driven through the store itself (the core's waiting
 * and renewal are the contract suite's): the bound holds under concurrency, tokens only grow (also
 * after every row is gone), a repeated request adds nothing, releases and renewals match owner and
 * token, expiry is the database's, and a semaphore never touches the lock of its name. One backend
 * per database, shared by the tests; every test uses semaphore names of its own.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LeaseRowPermitsTest {
  private static final Duration LONG = Duration.ofSeconds(30);
  private static final Map<String, JdbcLockBackend> BACKENDS = new ConcurrentHashMap<>();

  private static JdbcLockBackend backend(String database) {
    return BACKENDS.computeIfAbsent(
        database, d -> JdbcLockBackend.connect(LeaseRowRenewalTest.settings(d, "")));
  }

  private static PermitStore store(String database) {
    return backend(database).permits().orElseThrow();
  }

  @AfterAll
  static void closeBackends() {
    BACKENDS.values().forEach(JdbcLockBackend::close);
    BACKENDS.clear();
  }

  private static String name(String what) {
    return what + "-" + UUID.randomUUID();
  }

  private static LockOwner owner() {
    return LockOwner.ofGrant(UUID.randomUUID().toString());
  }

  private static <T> T get(CompletableFuture<T> future) throws Exception {
    return future.get(20, TimeUnit.SECONDS);
  }

  private static long granted(AcquireResult result) {
    assertThat(result).isInstanceOf(AcquireResult.Granted.class);
    assertThat(((AcquireResult.Granted) result).holdCount()).isEqualTo(1);
    return ((AcquireResult.Granted) result).fencingToken();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"h2", "postgresql", "mariadb", "mysql-on-mariadb"})
  void grantsUpToTheBoundWithGrowingTokensAndRepeatsAddNothing(String database) throws Exception {
    PermitStore store = store(database);
    String s = name("bound");
    LockOwner a = owner();
    LockOwner b = owner();
    long first = granted(get(store.tryAcquire(s, 3, 2, a, LONG)));
    assertThat(get(store.tryAcquire(s, 3, 2, b, LONG)))
        .as("2 + 2 > 3")
        .isInstanceOfSatisfying(
            AcquireResult.Held.class,
            held -> assertThat(held.holderRemaining()).isPositive().isLessThanOrEqualTo(LONG));
    assertThat(granted(get(store.tryAcquire(s, 3, 2, a, LONG))))
        .as("a repeated request: the same grant")
        .isEqualTo(first);
    long second = granted(get(store.tryAcquire(s, 3, 1, b, LONG)));
    assertThat(second).isGreaterThan(first);
    assertThat(get(store.tryAcquire(s, 3, 1, owner(), LONG)))
        .isInstanceOf(AcquireResult.Held.class);
    assertThat(get(store.tryAcquire(s, 4, 1, owner(), LONG)))
        .as("the bound is each acquisition's own")
        .isInstanceOf(AcquireResult.Granted.class);

    List<PermitInfo> holders = get(store.holders(s));
    assertThat(holders).extracting(PermitInfo::fencingToken).isSorted().hasSize(3);
    assertThat(holders.get(0).count()).isEqualTo(2);
    assertThat(holders.get(0).semaphore()).isEqualTo(s);
    assertThat(holders.get(0).holder()).doesNotContain(a.key());
    assertThat(holders.get(0).leaseRemaining()).isPositive();
    assertThat(holders.get(0).heldSince()).isNotNull();
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"h2", "postgresql", "mariadb", "mysql-on-mariadb"})
  void releaseAndRenewalMatchOwnerAndToken(String database) throws Exception {
    PermitStore store = store(database);
    String s = name("release");
    LockOwner a = owner();
    long token = granted(get(store.tryAcquire(s, 1, 1, a, LONG)));
    assertThat(get(store.release(s, owner(), token))).isEqualTo(ReleaseResult.NOT_HELD);
    assertThat(get(store.release(s, a, token + 1))).isEqualTo(ReleaseResult.NOT_HELD);
    assertThat(get(store.release("other-" + s, a, token))).isEqualTo(ReleaseResult.NOT_HELD);

    HeldLease live = new HeldLease(s, a, token, LONG);
    HeldLease wrongToken = new HeldLease(s, a, token + 1, LONG);
    HeldLease stranger = new HeldLease(s, owner(), token, LONG);
    assertThat(get(store.renew(List.of(live, wrongToken, stranger))))
        .containsExactlyInAnyOrder(wrongToken, stranger);

    assertThat(get(store.release(s, a, token))).isEqualTo(ReleaseResult.RELEASED);
    assertThat(get(store.release(s, a, token))).isEqualTo(ReleaseResult.NOT_HELD);
    assertThat(get(store.renew(List.of(live)))).containsExactly(live);
    assertThat(granted(get(store.tryAcquire(s, 1, 1, owner(), LONG)))).isGreaterThan(token);
  }

  /**
   * A lease ends by the database's clock: the grant stops counting, its renewal finds it gone, and
   * the counter goes on from its last token also after every row was deleted.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"h2", "postgresql", "mariadb", "mysql-on-mariadb"})
  void anEndedLeaseFreesItsPermitsAndTokensNeverGoBack(String database) throws Exception {
    PermitStore store = store(database);
    String s = name("expiry");
    LockOwner a = owner();
    long token = granted(get(store.tryAcquire(s, 1, 1, a, Duration.ofMillis(300))));
    long[] next = new long[1];
    await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(50))
        .until(
            () -> {
              AcquireResult r = get(store.tryAcquire(s, 1, 1, owner(), LONG));
              if (r instanceof AcquireResult.Granted g) {
                next[0] = g.fencingToken();
                return true;
              }
              return false;
            });
    assertThat(next[0]).isGreaterThan(token);
    assertThat(get(store.renew(List.of(new HeldLease(s, a, token, LONG))))).hasSize(1);
    assertThat(get(store.release(s, a, token))).isEqualTo(ReleaseResult.NOT_HELD);

    deleteAllPermitRows(database, s);
    assertThat(get(store.holders(s))).isEmpty();
    assertThat(granted(get(store.tryAcquire(s, 1, 1, owner(), LONG)))).isGreaterThan(next[0]);
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"h2", "postgresql", "mariadb", "mysql-on-mariadb"})
  void forceReleaseDeletesOneGrantWhateverItsOwner(String database) throws Exception {
    PermitStore store = store(database);
    String s = name("force");
    LockOwner a = owner();
    LockOwner b = owner();
    long ta = granted(get(store.tryAcquire(s, 3, 2, a, LONG)));
    long tb = granted(get(store.tryAcquire(s, 3, 1, b, LONG)));

    Optional<PermitInfo> broken = get(store.forceRelease(s, ta));
    assertThat(broken).isPresent();
    assertThat(broken.get().fencingToken()).isEqualTo(ta);
    assertThat(broken.get().count()).isEqualTo(2);
    assertThat(get(store.forceRelease(s, ta))).isEmpty();
    assertThat(get(store.holders(s))).extracting(PermitInfo::fencingToken).containsExactly(tb);
    assertThat(get(store.renew(List.of(new HeldLease(s, a, ta, LONG))))).hasSize(1);
    assertThat(get(store.tryAcquire(s, 3, 2, owner(), LONG)))
        .isInstanceOf(AcquireResult.Granted.class);
  }

  /** A semaphore and a lock of one name: neither sees the other. */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"h2", "postgresql", "mariadb", "mysql-on-mariadb"})
  void aSemaphoreIsApartFromTheLockOfItsName(String database) throws Exception {
    JdbcLockBackend backend = backend(database);
    String s = name("apart");
    LockOwner lockOwner = owner();
    long lockToken = granted(get(backend.tryAcquire(s, lockOwner, LONG)));
    long permit = granted(get(store(database).tryAcquire(s, 1, 1, owner(), LONG)));
    assertThat(get(store(database).holders(s)))
        .extracting(PermitInfo::fencingToken)
        .containsExactly(permit);
    assertThat(get(backend.inspect(s))).hasSize(1);
    assertThat(get(store(database).forceRelease(s, lockToken)).isPresent())
        .isEqualTo(lockToken == permit); // only ever its own grant
    assertThat(get(backend.release(s, lockOwner, lockToken))).isEqualTo(ReleaseResult.RELEASED);
  }

  /** Never more than the bound held, with acquisitions racing on several connections. */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"h2", "postgresql", "mariadb", "mysql-on-mariadb"})
  void neverMoreThanTheBoundUnderConcurrency(String database) throws Exception {
    PermitStore store = store(database);
    String s = name("race");
    int bound = 2;
    AtomicInteger held = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    AtomicInteger grants = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<?>> workers = new ArrayList<>();
      for (int w = 0; w < 4; w++) {
        workers.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < 10; i++) {
                    LockOwner o = owner();
                    AcquireResult r = get(store.tryAcquire(s, bound, 1, o, LONG));
                    if (r instanceof AcquireResult.Granted g) {
                      grants.incrementAndGet();
                      most.accumulateAndGet(held.incrementAndGet(), Math::max);
                      held.decrementAndGet();
                      assertThat(get(store.release(s, o, g.fencingToken())))
                          .isEqualTo(ReleaseResult.RELEASED);
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> f : workers) {
        f.get(40, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(most.get()).isLessThanOrEqualTo(bound);
    assertThat(grants.get()).isPositive();
    assertThat(get(store.holders(s))).isEmpty();
  }

  /** Release signals exactly where the locks have them: PostgreSQL, per semaphore. */
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"h2", "postgresql", "mariadb"})
  void releasesAreSignalledWhereLocksAreSignalled(String database) throws Exception {
    JdbcLockBackend backend = backend(database);
    PermitStore store = store(database);
    String s = name("signal");
    AtomicInteger signals = new AtomicInteger();
    AtomicInteger lockSignals = new AtomicInteger();
    CompletableFuture<Void> watch = store.watchReleases(s, waiter -> signals.incrementAndGet());
    assertThat(watch != null)
        .as("a permit watch exactly where lock release signals exist")
        .isEqualTo(backend.releaseSignals().isPresent());
    if (watch == null) {
      return;
    }
    try (JdbcLockBackend other =
        JdbcLockBackend.connect(LeaseRowRenewalTest.settings(database, ""))) {
      get(watch);
      get(backend.watchReleases(s, waiter -> lockSignals.incrementAndGet()));
      PermitStore theirs = other.permits().orElseThrow();
      LockOwner a = owner();
      long token = granted(get(theirs.tryAcquire(s, 2, 1, a, LONG)));
      long forced = granted(get(theirs.tryAcquire(s, 2, 1, owner(), LONG)));
      assertThat(get(theirs.release(s, a, token))).isEqualTo(ReleaseResult.RELEASED);
      await().atMost(Duration.ofSeconds(10)).until(() -> signals.get() >= 1);
      assertThat(get(theirs.forceRelease(s, forced))).isPresent();
      await().atMost(Duration.ofSeconds(10)).until(() -> signals.get() >= 2);
      assertThat(lockSignals.get()).as("the lock of the same name heard nothing").isZero();
    } finally {
      store.unwatchReleases(s);
      backend.unwatchReleases(s);
    }
  }

  /** Semaphores are lease rows: a client in a connection-bound mode refuses them, saying so. */
  @Test
  void aSessionLockClientRefusesSemaphores() throws Exception {
    JdbcLockSettings settings =
        TestDatabases.settings(TestDatabases.postgres(), JdbcLockMode.SESSION);
    try (LockClient client = JdbcLocks.newClient(settings, LockClientOptions.defaults())) {
      assertThat(client.capabilities()).doesNotContain(io.dlock.BackendCapability.SEMAPHORES);
      assertThatThrownBy(() -> client.semaphore("refused", 2))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("SEMAPHORES")
          .hasMessageContaining("JDBC lease-row mode");
    }
    try (JdbcLockBackend row =
        JdbcLockBackend.connect(TestDatabases.settings(TestDatabases.H2_URL, JdbcLockMode.ROW))) {
      assertThat(row.permits()).isEmpty();
    }
  }

  private static void deleteAllPermitRows(String database, String semaphore) throws Exception {
    JdbcLockBackend backend = backend(database);
    String table = LeaseRowRenewalTest.settings(database, "").table();
    try (Connection c = backend.dataSource().getConnection();
        PreparedStatement ps =
            c.prepareStatement("DELETE FROM " + table + "_permits WHERE semaphore = ?")) {
      ps.setString(1, semaphore);
      ps.executeUpdate();
    }
  }
}
