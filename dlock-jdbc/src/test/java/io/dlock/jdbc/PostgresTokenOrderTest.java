package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockOptions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lease rows on PostgreSQL: fencing tokens increase in the order of the grants, also when an
 * acquisition is delayed inside the database after its statement began (a row lock, a descheduled
 * backend). The delay is made exact with a test trigger that holds one owner's insert between the
 * moment its row was built and the moment it is inserted.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PostgresTokenOrderTest {
  private static final String TABLE = "dlock_order_test";
  private static final long GATE = 42_424_242L;

  @Test
  void aDelayedInsertIsNeverGrantedALowerTokenThanAGrantMadeMeanwhile() throws Exception {
    String url = TestDatabases.postgres();
    JdbcLockSettings settings = JdbcLockSettings.of(url).withTable(TABLE).withCreateSchema(true);
    String name = "order-" + UUID.randomUUID();
    try (LockClient delayed = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        LockClient other = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        Connection admin = DriverManager.getConnection(url);
        Connection gate = DriverManager.getConnection(url)) {
      installPauseTrigger(admin);
      execute(gate, "SELECT pg_advisory_lock(" + GATE + ")");

      // The delayed acquisition: built its row (and, before the fix, drew its token), then waits
      // in the trigger until the gate opens.
      CompletableFuture<Optional<Lease>> first =
          CompletableFuture.supplyAsync(
              () -> delayed.lock(name, LockOptions.defaults().withOwnerId("delayed")).tryAcquire());
      await().atMost(Duration.ofSeconds(3)).until(() -> waitingAcquisitions(admin) == 1);

      // Meanwhile another client asks. It is either granted now (and releases at once), or
      // waits behind the delayed acquisition: grants must then come in token order either way.
      CompletableFuture<Optional<Lease>> second =
          CompletableFuture.supplyAsync(() -> other.lock(name).tryAcquire());
      await()
          .atMost(Duration.ofSeconds(3))
          .until(() -> second.isDone() || waitingAcquisitions(admin) == 2);
      List<Long> grantOrder = new ArrayList<>();
      if (second.isDone()) {
        Lease meanwhile = second.join().orElseThrow();
        grantOrder.add(meanwhile.fencingToken());
        assertThat(meanwhile.release()).isTrue();
      }

      execute(gate, "SELECT pg_advisory_unlock(" + GATE + ")");
      Lease late = first.get(10, TimeUnit.SECONDS).orElseThrow();
      grantOrder.add(late.fencingToken());
      second.get(10, TimeUnit.SECONDS); // held by the delayed grant, unless granted above
      assertThat(late.release()).isTrue();
      Lease next = other.lock(name).tryAcquire().orElseThrow();
      grantOrder.add(next.fencingToken());
      next.release();

      assertThat(grantOrder).as("fencing tokens in the order of the grants").isSorted();
      assertThat(grantOrder).doesNotHaveDuplicates();
    } finally {
      try (Connection admin = DriverManager.getConnection(url)) {
        execute(admin, "DROP TRIGGER IF EXISTS " + TABLE + "_pause ON " + TABLE);
      }
    }
  }

  /** Holds the insert of owner id {@code delayed} at the gate (a shared advisory lock). */
  private static void installPauseTrigger(Connection admin) throws SQLException {
    execute(
        admin,
        """
        CREATE OR REPLACE FUNCTION %1$s_pause() RETURNS trigger AS $$
        BEGIN
          IF NEW.owner = 'o:delayed' THEN
            PERFORM pg_advisory_xact_lock_shared(%2$d);
          END IF;
          RETURN NEW;
        END $$ LANGUAGE plpgsql
        """
            .formatted(TABLE, GATE));
    execute(admin, "DROP TRIGGER IF EXISTS " + TABLE + "_pause ON " + TABLE);
    execute(
        admin,
        "CREATE TRIGGER "
            + TABLE
            + "_pause BEFORE INSERT ON "
            + TABLE
            + " FOR EACH ROW EXECUTE FUNCTION "
            + TABLE
            + "_pause()");
  }

  /** Acquisition statements of this table that wait on a lock in the database now. */
  private static int waitingAcquisitions(Connection admin) throws SQLException {
    try (PreparedStatement ps =
        admin.prepareStatement(
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                + " AND query LIKE ? AND pid <> pg_backend_pid()")) {
      ps.setString(1, "%INSERT INTO " + TABLE + " AS l%");
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }

  private static void execute(Connection c, String sql) throws SQLException {
    try (Statement st = c.createStatement()) {
      st.execute(sql);
    }
  }
}
