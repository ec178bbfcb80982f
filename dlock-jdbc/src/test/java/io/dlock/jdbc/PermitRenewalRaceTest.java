package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.PermitInfo;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LockOwner;
import io.dlock.spi.PermitStore;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A renewal evaluated before its grant's lease ended but committed after it (a slow commit: a WAL
 * flush, a synchronous standby; or an early entry of a renewal batch, which pgjdbc sends as one
 * implicit transaction) must not let an acquisition count the grant as ended meanwhile. Found by
 * review: on PostgreSQL the acquisition's delete of ended grants passed the grant while it was
 * live, and its plain read of the grants, a moment later, saw the last committed version, ended: it
 * granted, the renewal's commit revived the other grant, and two were held of a bound of one.
 *
 * <p>The interleaving, made deterministic: grant A (renewed here by the store's own statement, held
 * uncommitted) and grant C, already ended, whose row another transaction locks, so that the
 * acquisition's delete passes A while live and waits at C until A's old lease has ended too.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PermitRenewalRaceTest {
  private static final String TABLE = "dlock_test_renew_race";
  private static final Duration LONG = Duration.ofSeconds(30);

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"postgresql", "mariadb"})
  void aRenewalCommittedAfterTheLeaseEndedIsCountedNotOverGranted(String database)
      throws Exception {
    JdbcLockSettings settings = LeaseRowRenewalTest.settings(database, "").withTable(TABLE);
    try (JdbcLockBackend backend = JdbcLockBackend.connect(settings)) {
      emptyPermitTable(backend, database);
      PermitStore store = backend.permits().orElseThrow();
      PermitStatements statements =
          database.equals("postgresql")
              ? new PostgresPermitStatements(TABLE, settings.statementTimeout())
              : new MySqlPermitStatements(TABLE, settings.statementTimeout());
      String s = "renew-race-" + UUID.randomUUID();
      // A before C in the key and in the table: every scan of the grants meets A first.
      LockOwner a = LockOwner.ofGrant("0-" + UUID.randomUUID());
      LockOwner c = LockOwner.ofGrant("z-" + UUID.randomUUID());
      long tokenA = granted(store.tryAcquire(s, 2, 1, a, Duration.ofMillis(3000)));
      granted(store.tryAcquire(s, 2, 1, c, Duration.ofMillis(200)));

      CompletableFuture<AcquireResult> second;
      try (Connection renewing = backend.dataSource().getConnection();
          Connection lockingC = backend.dataSource().getConnection()) {
        renewing.setAutoCommit(false);
        lockingC.setAutoCommit(false);
        long renewer = sessionId(renewing, database);
        long locker = sessionId(lockingC, database);
        // Evaluated while A's lease is live: its row is renewed, not yet committed.
        assertThat(statements.renew(renewing, List.of(new HeldLease(s, a, tokenA, LONG))))
            .as("the renewal found the grant live")
            .isEmpty();
        await()
            .atMost(Duration.ofSeconds(10))
            .pollInterval(Duration.ofMillis(20))
            .until(() -> holders(store, s).size() == 1); // C ended, A not yet
        try (PreparedStatement ps =
            lockingC.prepareStatement(
                "SELECT 1 FROM "
                    + TABLE
                    + "_permits WHERE semaphore = ? AND owner = ? FOR UPDATE")) {
          ps.setString(1, s);
          ps.setString(2, c.key());
          ps.executeQuery().close();
        }
        second = store.tryAcquire(s, 1, 1, LockOwner.ofGrant(UUID.randomUUID().toString()), LONG);
        await()
            .atMost(Duration.ofSeconds(10))
            .pollInterval(Duration.ofMillis(20))
            .until(
                () ->
                    second.isDone()
                        || blockedBy(backend, database, locker)
                        || blockedBy(backend, database, renewer));
        // A's old lease ends, as every reader of committed rows sees; then C's lock goes.
        await()
            .atMost(Duration.ofSeconds(10))
            .pollInterval(Duration.ofMillis(20))
            .until(() -> holders(store, s).isEmpty());
        lockingC.rollback();
        await()
            .atMost(Duration.ofSeconds(10))
            .pollInterval(Duration.ofMillis(20))
            .until(() -> second.isDone() || blockedBy(backend, database, renewer));
        renewing.commit();
      }
      AcquireResult answer = second.get(20, TimeUnit.SECONDS);
      assertThat(holders(store, s).stream().mapToInt(PermitInfo::count).sum())
          .as("permits held of a bound of 1 (the second acquisition answered %s)", answer)
          .isLessThanOrEqualTo(1);
      assertThat(answer).isInstanceOf(AcquireResult.Held.class);
    }
  }

  private static long granted(CompletableFuture<AcquireResult> result) throws Exception {
    return ((AcquireResult.Granted) result.get(10, TimeUnit.SECONDS)).fencingToken();
  }

  private static List<PermitInfo> holders(PermitStore store, String s) throws Exception {
    return store.holders(s).get(10, TimeUnit.SECONDS);
  }

  /** A table of this test's own, emptied: its rows lie in the order they are inserted. */
  private static void emptyPermitTable(JdbcLockBackend backend, String database) throws Exception {
    try (Connection c = backend.dataSource().getConnection();
        Statement st = c.createStatement()) {
      st.execute(
          (database.equals("postgresql") ? "TRUNCATE " : "DELETE FROM ") + TABLE + "_permits");
    }
  }

  private static long sessionId(Connection c, String database) throws Exception {
    String sql =
        database.equals("postgresql") ? "SELECT pg_backend_pid()" : "SELECT CONNECTION_ID()";
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery(sql)) {
      rs.next();
      return rs.getLong(1);
    }
  }

  /** Whether a statement of another session waits for a lock that session {@code id} holds. */
  private static boolean blockedBy(JdbcLockBackend backend, String database, long id)
      throws Exception {
    String sql =
        database.equals("postgresql")
            ? "SELECT count(*) FROM pg_stat_activity WHERE ?::int = ANY(pg_blocking_pids(pid))"
            : "SELECT count(*) FROM information_schema.INNODB_LOCK_WAITS w"
                + " JOIN information_schema.INNODB_TRX t ON t.trx_id = w.blocking_trx_id"
                + " WHERE t.trx_mysql_thread_id = ?";
    try (Connection c = backend.dataSource().getConnection();
        PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setLong(1, id);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() && rs.getLong(1) > 0;
      }
    }
  }
}
