package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.UUID;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.slf4j.LoggerFactory;

/**
 * A start with create-schema on a fresh MariaDB logs no warning: the tables are created without a
 * probe that fails first, whose error MariaDB's driver logged as a WARN (found by a new user).
 */
@EnabledIf(
    value = "io.dlock.jdbc.TestDatabases#hasMariaDb",
    disabledReason = TestDatabases.NO_MARIADB)
class FreshSchemaLogTest {
  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"mariadb", "mysql-on-mariadb"})
  void aStartThatCreatesTheTablesLogsNoWarning(String database) {
    JdbcLockSettings any = LeaseRowRenewalTest.settings(database, "");
    JdbcLockSettings fresh =
        any.withTable("fresh_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12))
            .withCreateSchema(true);
    Logger driver = (Logger) LoggerFactory.getLogger("org.mariadb.jdbc");
    ListAppender<ILoggingEvent> logged = new ListAppender<>();
    logged.start();
    driver.addAppender(logged);
    try {
      JdbcLockBackend.connect(fresh).close();
    } finally {
      driver.detachAppender(logged);
    }
    assertThat(logged.list)
        .filteredOn(e -> e.getLevel().isGreaterOrEqual(Level.WARN))
        .extracting(ILoggingEvent::getFormattedMessage)
        .isEmpty();
  }
}
