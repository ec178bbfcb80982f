package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Lease rows on MariaDB, in the MariaDB dialect and in the MySQL one: fencing tokens increase in
 * the order of the grants, also when an acquisition is delayed inside the database after its
 * statement began. A test trigger holds the insert of one owner id (before the row is inserted or
 * found duplicate) at a gate, a user lock the test holds; meanwhile another client is granted the
 * lock and releases it; then the gate opens. Before the fix the delayed acquisition had drawn its
 * token when its statement began, and was granted a lower token than the grant made meanwhile.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class MariaDbTokenOrderTest {
  private static final String TABLE = "dlock_order_test";
  private static final String MYSQL_TABLE = "dlock_order_test_my";
  private static final String GATE = "dlock_order_test_gate";

  @Test
  void aDelayedInsertIsNeverGrantedALowerTokenThanAGrantMadeMeanwhile() throws Exception {
    delayedAcquisitionKeepsTokenOrder(false, JdbcDatabase.MARIADB);
  }

  @Test
  void aDelayedTakeOverOfAnExpiredRowIsNeverGrantedALowerTokenThanAGrantMadeMeanwhile()
      throws Exception {
    delayedAcquisitionKeepsTokenOrder(true, JdbcDatabase.MARIADB);
  }

  @Test
  void mySqlDialect_aDelayedInsertIsNeverGrantedALowerTokenThanAGrantMadeMeanwhile()
      throws Exception {
    delayedAcquisitionKeepsTokenOrder(false, JdbcDatabase.MYSQL);
  }

  @Test
  void mySqlDialect_aDelayedTakeOverIsNeverGrantedALowerTokenThanAGrantMadeMeanwhile()
      throws Exception {
    delayedAcquisitionKeepsTokenOrder(true, JdbcDatabase.MYSQL);
  }

  /**
   * The MySQL dialect draws a new grant's token in autocommit, after the grant's commit: a client
   * stalled right after its draw (here: held at the gate as it writes its token) holds no lock on
   * the counter row that the names of its slot share. Drawn inside the grant's transaction, the
   * counter row stayed locked until the commit, and the other name waited for the stalled client.
   */
  @Test
  void mySqlDialect_aGrantStalledAfterItsDrawHoldsUpNoOtherNameOfItsCounterRow() throws Exception {
    assumeTrue(TestDatabases.hasMariaDb(), TestDatabases.NO_MARIADB);
    String url = TestDatabases.mariaDb().orElseThrow();
    JdbcLockSettings settings =
        JdbcLockSettings.of(url)
            .withTable(MYSQL_TABLE)
            .withCreateSchema(true)
            .withDatabase(JdbcDatabase.MYSQL);
    String name = "stalled-" + UUID.randomUUID();
    String sameSlot = name;
    for (int i = 0;
        sameSlot.equals(name) || MySqlFences.slot(sameSlot) != MySqlFences.slot(name);
        i++) {
      sameSlot = name + "-" + i;
    }
    try (LockClient delayed = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        LockClient other = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        Connection admin = DriverManager.getConnection(url);
        Connection gate = DriverManager.getConnection(url)) {
      execute(admin, "DROP TRIGGER IF EXISTS " + MYSQL_TABLE + "_pause");
      execute(
          admin,
          """
          CREATE TRIGGER %1$s_pause BEFORE UPDATE ON %1$s FOR EACH ROW
          BEGIN
            IF NEW.owner = 'o:delayed' AND OLD.token = 0 AND NEW.token <> 0 THEN
              DO GET_LOCK('%2$s', 20);
              DO RELEASE_LOCK('%2$s');
            END IF;
          END
          """
              .formatted(MYSQL_TABLE, GATE));
      execute(gate, "SELECT GET_LOCK('" + GATE + "', 5)");

      CompletableFuture<Optional<Lease>> stalled =
          CompletableFuture.supplyAsync(
              () -> delayed.lock(name, LockOptions.defaults().withOwnerId("delayed")).tryAcquire());
      await().atMost(Duration.ofSeconds(10)).until(() -> waitingAtTheGate(admin) == 1);

      // The stalled grant has drawn from the counter row of its slot: another name of that slot is
      // granted now, with a higher token, while the stalled one still waits at the gate.
      String neighbour = sameSlot;
      Lease meanwhile =
          CompletableFuture.supplyAsync(() -> other.lock(neighbour).tryAcquire())
              .get(10, TimeUnit.SECONDS)
              .orElseThrow();
      assertThat(stalled).isNotDone();
      assertThat(meanwhile.release()).isTrue();

      execute(gate, "SELECT RELEASE_LOCK('" + GATE + "')");
      Lease late = stalled.get(10, TimeUnit.SECONDS).orElseThrow();
      assertThat(late.fencingToken()).isPositive().isLessThan(meanwhile.fencingToken());
      assertThat(late.release()).isTrue();
    }
  }

  private static void delayedAcquisitionKeepsTokenOrder(boolean rowExists, JdbcDatabase database)
      throws Exception {
    assumeTrue(TestDatabases.hasMariaDb(), TestDatabases.NO_MARIADB);
    String url = TestDatabases.mariaDb().orElseThrow();
    String table = database == JdbcDatabase.MYSQL ? MYSQL_TABLE : TABLE;
    JdbcLockSettings settings =
        JdbcLockSettings.of(url).withTable(table).withCreateSchema(true).withDatabase(database);
    String name = "order-" + UUID.randomUUID();
    try (LockClient delayed = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        LockClient other = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        Connection admin = DriverManager.getConnection(url);
        Connection gate = DriverManager.getConnection(url)) {
      if (rowExists) {
        Lease earlier = other.lock(name).tryAcquire().orElseThrow();
        assertThat(earlier.release()).isTrue();
      }
      installPauseTrigger(admin, table);
      execute(gate, "SELECT GET_LOCK('" + GATE + "', 5)");

      CompletableFuture<Optional<Lease>> first =
          CompletableFuture.supplyAsync(
              () -> delayed.lock(name, LockOptions.defaults().withOwnerId("delayed")).tryAcquire());
      await().atMost(Duration.ofSeconds(10)).until(() -> waitingAtTheGate(admin) == 1);

      // Meanwhile another client asks: granted now (the delayed one has not reached the row), or
      // waiting behind it; grants must come in token order either way.
      CompletableFuture<Optional<Lease>> second =
          CompletableFuture.supplyAsync(() -> other.lock(name).tryAcquire());
      List<Long> grantOrder = new ArrayList<>();
      Optional<Lease> meanwhile = second.get(10, TimeUnit.SECONDS);
      if (meanwhile.isPresent()) {
        grantOrder.add(meanwhile.get().fencingToken());
        assertThat(meanwhile.get().release()).isTrue();
      }

      execute(gate, "SELECT RELEASE_LOCK('" + GATE + "')");
      Lease late = first.get(10, TimeUnit.SECONDS).orElseThrow();
      grantOrder.add(late.fencingToken());
      assertThat(late.release()).isTrue();
      Lease next = other.lock(name).tryAcquire().orElseThrow();
      grantOrder.add(next.fencingToken());
      next.release();

      assertThat(grantOrder).as("fencing tokens in the order of the grants").isSorted();
      assertThat(grantOrder).doesNotHaveDuplicates();
    }
  }

  @AfterEach
  void dropTrigger() throws SQLException {
    if (TestDatabases.mariaDb().isPresent()) {
      try (Connection admin = DriverManager.getConnection(TestDatabases.mariaDb().get())) {
        execute(admin, "DROP TRIGGER IF EXISTS " + TABLE + "_pause");
        execute(admin, "DROP TRIGGER IF EXISTS " + MYSQL_TABLE + "_pause");
      }
    }
  }

  /** Holds the insert of owner id {@code delayed} at the gate (a user lock), before the row. */
  private static void installPauseTrigger(Connection admin, String table) throws SQLException {
    execute(admin, "DROP TRIGGER IF EXISTS " + table + "_pause");
    execute(
        admin,
        """
        CREATE TRIGGER %1$s_pause BEFORE INSERT ON %1$s FOR EACH ROW
        BEGIN
          IF NEW.owner = 'o:delayed' THEN
            DO GET_LOCK('%2$s', 20);
            DO RELEASE_LOCK('%2$s');
          END IF;
        END
        """
            .formatted(table, GATE));
  }

  /**
   * Connections waiting for the gate's user lock now. Only the gate's: other tests on the server at
   * the same time wait for user locks of their own (the trigger's wait shows as its statement).
   */
  private static int waitingAtTheGate(Connection admin) throws SQLException {
    try (PreparedStatement ps =
        admin.prepareStatement(
            "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE STATE LIKE ?"
                + " AND INFO LIKE ? AND ID <> CONNECTION_ID()")) {
      ps.setString(1, "%User lock%");
      ps.setString(2, "%GET_LOCK('" + GATE + "'%");
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
