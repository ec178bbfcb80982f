package io.dlock.jdbc;

import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;

/** The clock-skew tests on the MariaDB named by {@code DLOCK_TEST_MYSQL_URL}. */
@EnabledIfEnvironmentVariable(
    named = TestDatabases.MYSQL_URL_VARIABLE,
    matches = ".+",
    disabledReason = "DLOCK_TEST_MYSQL_URL is not set: no MariaDB to test against")
class MariaDbClockSkewTest extends ClockSkewContract {
  @Override
  protected String url(String zone) {
    // MariaDB accepts offsets from -12:59 to +13:00 only.
    String offset = zone.equals("+14:00") ? "+13:00" : zone;
    String base = TestDatabases.externalMariaDb().orElseThrow();
    return base + (base.contains("?") ? "&" : "?") + "sessionVariables=time_zone='" + offset + "'";
  }
}
