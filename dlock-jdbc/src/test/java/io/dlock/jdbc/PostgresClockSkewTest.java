package io.dlock.jdbc;

/** The clock-skew tests on PostgreSQL (external if configured, else embedded). */
class PostgresClockSkewTest extends ClockSkewContract {
  @Override
  protected String url(String zone) {
    // POSIX zone names count west as positive: "UTC-14" is 14 hours east of Greenwich.
    String posix = "UTC" + (zone.startsWith("+") ? "-" : "%2B") + zone.substring(1, 3);
    String base = TestDatabases.postgres();
    return base + (base.contains("?") ? "&" : "?") + "options=-c%20TimeZone%3D" + posix;
  }
}
