package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.spi.AcquireResult;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A permit acquisition that InnoDB picks as a deadlock's victim is attempted again, not failed to
 * its caller: acquisitions of two semaphores next to each other in the grants' key order meet on
 * the gap lock between them (found by review, reproduced on MariaDB), and the victim's transaction,
 * rolled back whole, granted nothing. The deadlock is stood for by a grant's insert that fails as
 * InnoDB's victim once.
 */
@EnabledIf(
    value = "io.dlock.jdbc.TestDatabases#hasMariaDb",
    disabledReason = TestDatabases.NO_MARIADB)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class PermitDeadlockVictimTest {
  @ParameterizedTest(name = "{0}, {1}")
  @CsvSource({
    "mysql-on-mariadb, one statement",
    "mariadb, one statement",
    "mysql-on-mariadb, full path",
    "mariadb, full path"
  })
  void aDeadlockVictimIsAttemptedAgainAndGrantsOnce(String database, String path) throws Exception {
    JdbcLockSettings settings = LeaseRowRenewalTest.settings(database, "");
    try (JdbcLockBackend backend = JdbcLockBackend.connect(settings);
        Connection real = backend.dataSource().getConnection()) {
      MySqlPermitStatements statements =
          new MySqlPermitStatements(settings.table(), Duration.ofSeconds(5));
      PermitAcquisition acquisition = new PermitAcquisition(statements, System::nanoTime);
      String s = "deadlock-victim-" + UUID.randomUUID();
      AcquireResult first =
          acquisition.acquire(real, s, 2, 1, "t:a", "h", 30_000, System.nanoTime());
      long highest = ((AcquireResult.Granted) first).fencingToken();
      if (path.equals("full path")) {
        // An ended grant's row sends the attempt down the full path (the delete, then the insert,
        // the first statement into the permits table), where the one-statement grant is not sent.
        AcquireResult ended =
            acquisition.acquire(real, s, 3, 1, "t:ended", "h", 1, System.nanoTime());
        highest = ((AcquireResult.Granted) ended).fencingToken();
        await().atMost(Duration.ofSeconds(5)).until(() -> endedRows(real, statements, s) == 1);
      }
      long firstToken = highest;
      Connection victimOnce =
          LosingCommits.deadlockOnce(real, "INSERT INTO " + statements.permits, (c, p) -> {});
      AcquireResult second =
          acquisition.acquire(victimOnce, s, 2, 1, "t:b", "h", 30_000, System.nanoTime());
      assertThat(second)
          .isInstanceOfSatisfying(
              AcquireResult.Granted.class,
              g -> assertThat(g.fencingToken()).isGreaterThan(firstToken));
      try (PreparedStatement ps =
          real.prepareStatement(
              "SELECT COUNT(*) FROM " + statements.permits + " WHERE semaphore = ?")) {
        ps.setString(1, s);
        try (ResultSet rs = ps.executeQuery()) {
          rs.next();
          assertThat(rs.getInt(1)).as("grants held (the ended one deleted)").isEqualTo(2);
        }
      }
    }
  }

  private static int endedRows(Connection c, PermitStatements statements, String semaphore)
      throws Exception {
    try (PreparedStatement ps =
        c.prepareStatement(
            "SELECT COUNT(*) FROM "
                + statements.permits
                + " WHERE semaphore = ? AND expires_at <= "
                + statements.nowMillis())) {
      ps.setString(1, semaphore);
      try (ResultSet rs = ps.executeQuery()) {
        rs.next();
        return rs.getInt(1);
      }
    }
  }
}
