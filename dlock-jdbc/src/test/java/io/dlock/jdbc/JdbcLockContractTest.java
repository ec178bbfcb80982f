package io.dlock.jdbc;

import io.dlock.spi.LockBackend;
import io.dlock.testkit.LockContractTest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;

/**
 * The contract suite on one database in one mode. Subclasses name the database; backends made here
 * are closed after the class (the suite closes its clients, which close their backends; this
 * catches the ones the suite makes without a client).
 */
abstract class JdbcLockContractTest extends LockContractTest {
  private static final List<JdbcLockBackend> CREATED = new CopyOnWriteArrayList<>();

  /** The JDBC URL of the database under test. */
  protected abstract String url();

  /** The mode under test; lease rows unless a subclass says otherwise. */
  protected JdbcLockMode mode() {
    return JdbcLockMode.LEASE_ROW;
  }

  protected JdbcLockSettings settings() {
    return TestDatabases.settings(url(), mode());
  }

  /** Starts an embedded server before the test, so that no test's time bound includes its start. */
  @BeforeEach
  void databaseIsUp() {
    url();
  }

  @Override
  protected LockBackend newBackend() {
    JdbcLockBackend backend = JdbcLockBackend.connect(settings());
    CREATED.add(backend);
    return backend;
  }

  @Override
  protected LockBackend newBackendForUnreachableServer() {
    return JdbcLockBackend.connect(
        JdbcLockSettings.of(TestDatabases.unreachable(url()))
            .withTable(TestDatabases.TABLE)
            .withMode(mode())
            .withConnectTimeout(Duration.ofSeconds(1)));
  }

  @Override
  protected void deleteLockOnServer(String name) {
    JdbcLockBackend admin = JdbcLockBackend.connect(settings());
    try {
      if (mode() == JdbcLockMode.LEASE_ROW) {
        admin.deleteRow(name).get(10, TimeUnit.SECONDS);
      } else {
        // A connection-bound lock is deleted by ending its holder's connection.
        admin.forceRelease(name).get(10, TimeUnit.SECONDS);
      }
    } catch (Exception e) {
      throw new IllegalStateException("cannot delete the row of " + name, e);
    } finally {
      admin.close();
    }
  }

  @AfterAll
  static void closeBackends() {
    for (JdbcLockBackend backend : CREATED) {
      backend.close();
    }
    CREATED.clear();
  }
}
