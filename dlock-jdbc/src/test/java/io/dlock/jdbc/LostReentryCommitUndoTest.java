package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dlock.BackendUnavailableException;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockOptions;
import io.dlock.spi.LockOwner;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;

/**
 * Review of 45e614c (MySQL dialect). Client A of owner id "shared" has made a new grant (token 0,
 * nonce N) and not yet written its token. Client B of the same owner id re-enters it, and the
 * answer to B's upsert is lost with its connection after the server applied it: the count is 2. B's
 * "undo on another connection" must take back nothing of A's grant: before, with a transaction per
 * attempt, it undid by the grant's nonce N ({@code DELETE ... WHERE grant_nonce = N AND holds = 1})
 * and deleted A's grant when B's commit had never been applied; now B undoes by its own nonce,
 * which named no grant. B's hold is left (one too many, which ends with the lease), A writes its
 * token and is granted, and no stranger is.
 */
@EnabledIf(
    value = "io.dlock.jdbc.TestDatabases#hasMariaDb",
    disabledReason = TestDatabases.NO_MARIADB)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LostReentryCommitUndoTest {
  private static final LockOwner SHARED = LockOwner.ofOwnerId("shared");

  @Test
  void anUnappliedReentryOfAnUndrawnGrantNeverUndoesTheGrantOfAnotherClient() throws Exception {
    JdbcLockSettings settings = LeaseRowRenewalTest.settings("mysql-on-mariadb", "");
    String table = settings.table();
    String name = "lost-reentry-" + UUID.randomUUID();
    long nonceOfA = 0x5eed_0000_1234L;
    long tokenOfA = 987_654_321L;
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(TestDatabases.mariaDb().orElseThrow());
    config.setMaximumPoolSize(4);
    try (JdbcLockBackend plain = JdbcLockBackend.connect(settings);
        Connection admin = plain.dataSource().getConnection();
        HikariDataSource pool = new HikariDataSource(config)) {
      // A's grant, committed, between its commit and its token's write.
      try (PreparedStatement ps =
          admin.prepareStatement(
              "INSERT INTO "
                  + table
                  + " (name, owner, holds, token, expires_at, holder, granted_at, grant_nonce)"
                  + " VALUES (?, ?, 1, 0, "
                  + MySqlDialect.NOW_MILLIS
                  + " + 30000, 'client A', "
                  + MySqlDialect.NOW_MILLIS
                  + ", ?)")) {
        ps.setString(1, name);
        ps.setString(2, SHARED.key());
        ps.setLong(3, nonceOfA);
        assertThat(ps.executeUpdate()).isEqualTo(1);
      }
      // A's token write (MySqlLeaseRowStatements.writeToken), after B's attempt.
      Runnable aWritesItsToken =
          () -> {
            try (Connection a = plain.dataSource().getConnection();
                PreparedStatement ps =
                    a.prepareStatement(
                        "UPDATE "
                            + table
                            + " SET token = ? WHERE name = ? AND grant_nonce = ? AND token = 0"
                            + " AND expires_at > "
                            + MySqlDialect.NOW_MILLIS)) {
              ps.setLong(1, tokenOfA);
              ps.setString(2, name);
              ps.setLong(3, nonceOfA);
              assertThat(ps.executeUpdate()).as("A's token written: A is granted").isEqualTo(1);
            } catch (SQLException e) {
              throw new AssertionError(e);
            }
          };

      AtomicBoolean armed = new AtomicBoolean(true);
      try (LockClient clientB =
              JdbcLocks.newClient(
                  JdbcLockSettings.of(LosingCommits.statementAnswerLost(pool, armed, "INSERT"))
                      .withTable(table)
                      .withDatabase(JdbcDatabase.MYSQL),
                  LockClientOptions.defaults());
          LockClient stranger = JdbcLocks.newClient(settings, LockClientOptions.defaults())) {
        assertThatThrownBy(
                () -> clientB.lock(name, LockOptions.defaults().withOwnerId("shared")).tryAcquire())
            .isInstanceOf(BackendUnavailableException.class);
        assertThat(armed).as("B's answer was lost").isFalse();
        aWritesItsToken.run();

        assertThat(row(admin, table, name))
            .as("A's grant (token %d) after B's lost re-entry was undone: B's hold left", tokenOfA)
            .isEqualTo("o:shared|2|" + tokenOfA);
        assertThat(stranger.lock(name).tryAcquire())
            .as("A holds the lock: no stranger may be granted it")
            .isEmpty();
      }
    }
  }

  private static String row(Connection c, String table, String name) throws SQLException {
    try (PreparedStatement ps =
        c.prepareStatement("SELECT owner, holds, token FROM " + table + " WHERE name = ?")) {
      ps.setString(1, name);
      try (ResultSet rs = ps.executeQuery()) {
        return rs.next() ? rs.getString(1) + "|" + rs.getInt(2) + "|" + rs.getLong(3) : "no row";
      }
    }
  }
}
