package io.dlock.jdbc;

import org.junit.jupiter.api.condition.EnabledIf;

/**
 * The clock-skew tests on the MariaDB named by {@code DLOCK_TEST_MYSQL_URL}, else an embedded one.
 */
@EnabledIf(
    value = "io.dlock.jdbc.TestDatabases#hasMariaDb",
    disabledReason = TestDatabases.NO_MARIADB)
class MariaDbClockSkewTest extends ClockSkewContract {
  @Override
  protected String url(String zone) {
    // MariaDB accepts offsets from -12:59 to +13:00 only.
    String offset = zone.equals("+14:00") ? "+13:00" : zone;
    String base = TestDatabases.mariaDb().orElseThrow();
    return base + (base.contains("?") ? "&" : "?") + "sessionVariables=time_zone='" + offset + "'";
  }
}
