package io.dlock.jdbc;

/** The clock-skew tests on H2. */
class H2ClockSkewTest extends ClockSkewContract {
  @Override
  protected String url(String zone) {
    return TestDatabases.H2_URL + ";TIME ZONE=UTC" + zone;
  }
}
