package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockOptions;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A lease-row grant whose commit reaches the server while its answer is lost with the connection
 * (MySQL family: the grant's upsert, in autocommit, is its commit). The grant is committed and
 * nobody heard of it: before, a later call of the same owner id re-entered it and counted a second
 * hold, the one handed out was released, and the lock stayed held by nobody for its lease. Now the
 * grant is undone on another connection. The lost answer is made by a connection that commits, then
 * fails as a dead one does (SQLState 08S01) and closes.
 */
@EnabledIf(
    value = "io.dlock.jdbc.TestDatabases#hasMariaDb",
    disabledReason = TestDatabases.NO_MARIADB)
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LostCommitAnswerTest {

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"mariadb", "mysql-on-mariadb"})
  void aGrantWhoseCommitAnswerIsLostIsUndoneNotReenteredByTheOwnerIdsNextCall(String database) {
    AtomicBoolean loseCommitAnswer = new AtomicBoolean();
    JdbcLockSettings settings = LeaseRowRenewalTest.settings(database, "");
    HikariConfig config = new HikariConfig();
    config.setJdbcUrl(TestDatabases.mariaDb().orElseThrow());
    config.setMaximumPoolSize(4);
    String name = "lost-commit-" + UUID.randomUUID();
    LockOptions owner = LockOptions.defaults().withOwnerId("lost-commit");
    try (HikariDataSource pool = new HikariDataSource(config);
        LockClient client =
            JdbcLocks.newClient(
                JdbcLockSettings.of(
                        LosingCommits.statementAnswerLost(pool, loseCommitAnswer, "INSERT"))
                    .withTable(settings.table())
                    .withDatabase(settings.database())
                    .withCreateSchema(true),
                LockClientOptions.defaults());
        LockClient stranger = JdbcLocks.newClient(settings, LockClientOptions.defaults())) {
      loseCommitAnswer.set(true);
      assertThatThrownBy(() -> client.lock(name, owner).tryAcquire())
          .isInstanceOf(BackendUnavailableException.class);
      assertThat(loseCommitAnswer).as("the answer was lost").isFalse();

      Lease lease = client.lock(name, owner).tryAcquire().orElseThrow();
      assertThat(lease.release()).isTrue();
      assertThat(stranger.lock(name).tryAcquire())
          .as("the lock is free once the only hold handed out is released")
          .isPresent()
          .get()
          .satisfies(next -> assertThat(next.release()).isTrue());
    }
  }
}
