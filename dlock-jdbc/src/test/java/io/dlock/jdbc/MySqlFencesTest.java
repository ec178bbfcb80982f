package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockOptions;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The MySQL dialect's fencing counters, on MariaDB with the dialect forced: tokens keep increasing
 * per name when lock rows are deleted, names sharing a counter row each keep increasing, the
 * counter rows stay bounded by the slots however many names are used, and MySQL's own driver
 * (Connector/J) passes a drawn value back as the MariaDB driver does.
 */
@EnabledIf(
    value = "io.dlock.jdbc.TestDatabases#hasMariaDb",
    disabledReason = TestDatabases.NO_MARIADB)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MySqlFencesTest {

  @ParameterizedTest(name = "{0}")
  @EnumSource(JdbcLockMode.class)
  void tokensIncreasePerNameAcrossReleasesDeletionsForcedReleasesAndPurges(JdbcLockMode mode)
      throws Exception {
    JdbcLockSettings settings = TestDatabases.mySqlSettings(mariaDb(), mode);
    String name = "fences-" + UUID.randomUUID();
    List<Long> tokens = new ArrayList<>();
    try (JdbcLockBackend admin = JdbcLockBackend.connect(settings);
        LockClient client = JdbcLocks.newClient(settings, LockClientOptions.defaults())) {
      for (int round = 0; round < 4; round++) {
        Lease lease = client.lock(name).tryAcquire().orElseThrow();
        tokens.add(lease.fencingToken());
        switch (round) {
          case 0 -> assertThat(lease.release()).isTrue();
          case 1 -> {
            // The lock's row (or hold) goes behind the holder's back.
            assertThat(admin.forceRelease(name).get(10, TimeUnit.SECONDS)).isPresent();
            lease.release();
          }
          case 2 -> {
            assertThat(lease.release()).isTrue();
            if (mode == JdbcLockMode.LEASE_ROW) {
              admin.deleteRow(name).get(10, TimeUnit.SECONDS);
            }
          }
          default -> lease.release();
        }
      }
      if (mode == JdbcLockMode.LEASE_ROW) {
        // A lease that runs out, then a purge of its row.
        Lease shortLease =
            client
                .lock(name, LockOptions.defaults().withFixedLease(Duration.ofMillis(200)))
                .tryAcquire()
                .orElseThrow();
        tokens.add(shortLease.fencingToken());
        try (Connection c = DriverManager.getConnection(mariaDb())) {
          org.awaitility.Awaitility.await()
              .atMost(Duration.ofSeconds(10))
              .until(
                  () -> {
                    admin.purgeExpired(Duration.ZERO).get(10, TimeUnit.SECONDS);
                    return count(c, TestDatabases.MYSQL_TABLE + " WHERE name = '" + name + "'")
                        == 0;
                  });
        }
        assertThat(shortLease.release()).as("released after its fixed lease ran out").isFalse();
        tokens.add(client.lock(name).tryAcquire().orElseThrow().fencingToken());
      }
    }
    assertThat(tokens).isSorted().doesNotHaveDuplicates();
  }

  @Test
  void namesSharingACounterRowEachKeepIncreasing() throws Exception {
    JdbcLockSettings settings = TestDatabases.mySqlSettings(mariaDb(), JdbcLockMode.LEASE_ROW);
    String first = "shared-slot-" + UUID.randomUUID();
    String second = first;
    for (int i = 0;
        MySqlFences.slot(second) != MySqlFences.slot(first) || second.equals(first);
        i++) {
      second = first + "-" + i;
    }
    Map<String, List<Long>> tokens = Map.of(first, new ArrayList<>(), second, new ArrayList<>());
    try (LockClient client = JdbcLocks.newClient(settings, LockClientOptions.defaults())) {
      for (int i = 0; i < 20; i++) {
        for (String name : List.of(first, second)) {
          Lease lease = client.lock(name).tryAcquire().orElseThrow();
          tokens.get(name).add(lease.fencingToken());
          lease.release();
        }
      }
    }
    assertThat(tokens.get(first)).isSorted().doesNotHaveDuplicates();
    assertThat(tokens.get(second)).isSorted().doesNotHaveDuplicates();
    assertThat(tokens.get(first)).doesNotContainAnyElementsOf(tokens.get(second));
  }

  @Test
  void theSchemaCreatesEveryCounterRowOnceAndAMissingOneIsCreatedAtItsFirstDraw() throws Exception {
    String table = "dlock_fences_" + Long.toHexString(System.nanoTime());
    JdbcLockSettings settings =
        TestDatabases.mySqlSettings(mariaDb(), JdbcLockMode.LEASE_ROW).withTable(table);
    int names = 3_000;
    try (LockClient client = JdbcLocks.newClient(settings, LockClientOptions.defaults());
        Connection c = DriverManager.getConnection(mariaDb())) {
      assertThat(count(c, table + "_fences")).isEqualTo(MySqlFences.SLOTS);
      // Four callers at once, to spend the round trips in parallel.
      ExecutorService callers = Executors.newFixedThreadPool(4);
      try {
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
          int first = t;
          done.add(
              callers.submit(
                  () -> {
                    for (int i = first; i < names; i += 4) {
                      Lease lease = client.lock("bounded-" + i).tryAcquire().orElseThrow();
                      assertThat(lease.fencingToken()).isPositive();
                      lease.release();
                    }
                  }));
        }
        for (Future<?> f : done) {
          f.get(5, TimeUnit.MINUTES);
        }
      } finally {
        callers.shutdownNow();
      }
      assertThat(count(c, table)).as("lease rows left").isZero();
      assertThat(count(c, table + "_fences"))
          .as("counter rows after %d names", names)
          .isEqualTo(MySqlFences.SLOTS);

      // A schema made by hand without the counter rows: a slot's row is made at its first draw.
      String name = "hand-made";
      try (Statement st = c.createStatement()) {
        st.execute("DELETE FROM " + table + "_fences WHERE slot = " + MySqlFences.slot(name));
      }
      Lease first = client.lock(name).tryAcquire().orElseThrow();
      assertThat(first.release()).isTrue();
      Lease second = client.lock(name).tryAcquire().orElseThrow();
      assertThat(second.fencingToken()).isGreaterThan(first.fencingToken()).isPositive();
      second.release();
      assertThat(count(c, table + "_fences")).isEqualTo(MySqlFences.SLOTS);
    } finally {
      try (Connection c = DriverManager.getConnection(mariaDb());
          Statement st = c.createStatement()) {
        st.execute("DROP TABLE IF EXISTS " + table + ", " + table + "_fences");
        st.execute("DROP TABLE IF EXISTS " + table + "_held, " + table + "_rows");
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(JdbcLockMode.class)
  void mySqlsOwnDriverPassesDrawnTokensBack(JdbcLockMode mode) throws Exception {
    JdbcLockSettings settings = TestDatabases.mySqlSettings(connectorJ(mariaDb()), mode);
    String name = "connector-j-" + UUID.randomUUID();
    List<Long> tokens = new ArrayList<>();
    try (LockClient client = JdbcLocks.newClient(settings, LockClientOptions.defaults())) {
      for (int i = 0; i < 5; i++) {
        Lease lease = client.lock(name).tryAcquire().orElseThrow();
        tokens.add(lease.fencingToken());
        assertThat(lease.release()).isTrue();
      }
    }
    assertThat(tokens).isSorted().doesNotHaveDuplicates().allMatch(t -> t > 0);
  }

  private static String mariaDb() {
    return TestDatabases.mariaDb().orElseThrow();
  }

  /** The same server through MySQL Connector/J: {@code jdbc:mysql://host:port/db?user=...}. */
  private static String connectorJ(String mariaDbUrl) {
    Matcher m = Pattern.compile("jdbc:mariadb://([^/]+)/([^?]*)\\?(.*)").matcher(mariaDbUrl);
    assertThat(m.matches()).as("a jdbc:mariadb://host:port/db?... URL: %s", mariaDbUrl).isTrue();
    return "jdbc:mysql://" + m.group(1) + "/" + m.group(2) + "?" + m.group(3) + "&sslMode=DISABLED";
  }

  private static long count(Connection c, String table) throws SQLException {
    try (Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT COUNT(*) FROM " + table)) {
      rs.next();
      return rs.getLong(1);
    }
  }
}
