package io.dlock.bench;

import static io.dlock.bench.Fmt.micros;
import static io.dlock.bench.Fmt.row;

import io.dlock.bench.Scenarios.Kind;
import io.dlock.bench.Scenarios.Result;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * S1 and S2 on PostgreSQL: dlock's lease row next to ShedLock, on the server named by {@code
 * DLOCK_TEST_POSTGRES_URL} (the benchmark starts no database; without it the section says it was
 * skipped); writes the JDBC section and its targets.
 */
final class JdbcComparison {
  private JdbcComparison() {}

  static void run(RunPlan plan, MarkdownReport report) throws Exception {
    StringBuilder t = report.section(MarkdownReport.JDBC);
    Targets targets = report.targets();
    String url = System.getenv("DLOCK_TEST_POSTGRES_URL");
    if (url == null || url.isBlank()) {
      t.append(
          "Skipped: `DLOCK_TEST_POSTGRES_URL` is not set (for example"
              + " `jdbc:postgresql://127.0.0.1:5432/test?user=postgres`).\n");
      targets.notMeasured(
          "JDBC lease row on PostgreSQL: ≥ 1.2 × the JDBC peer", "skipped (no PostgreSQL)");
      return;
    }
    BenchmarkMain.progress("JDBC S1, S2");
    List<Locker> lockers = new ArrayList<>();
    try {
      lockers.add(new JdbcLockers.Dlock(url));
      lockers.add(new JdbcLockers.ShedLock(url));
      report.versions().addServer("PostgreSQL", serverVersion(url));
      Locker dlock = lockers.get(0);
      Locker shed = lockers.get(1);
      Map<Locker, Result> s1 = Scenarios.run(Kind.SOLO, lockers, Map.of(), 1, plan);
      Map<Locker, Result> s2 =
          Scenarios.run(Kind.DISTINCT, lockers, Map.of(), plan.threads(), plan);
      t.append(
          "PostgreSQL from `DLOCK_TEST_POSTGRES_URL`, both with 4 connections (dlock's"
              + " `maxConcurrentCalls`, ShedLock's Hikari pool). Both rotate each thread over 16"
              + " names: ShedLock cannot take a name again within the millisecond it released it."
              + " ShedLock has no waiting, so there is no S3 here. Spring Integration's"
              + " `JdbcLockRegistry` is not measured (see the notes).\n\n");
      t.append(
          "| contender | S1 ops/s | S1 ratio to ShedLock | S1 p50 µs | S1 p99 µs | S2 cycles/s (16"
              + " threads) | S2 ratio to ShedLock |\n|---|---|---|---|---|---|---|\n");
      for (Locker l : lockers) {
        t.append(
            row(
                l.name(),
                s1.get(l).opsPerSec.spread(),
                s1.get(l).opsPerSec.ratioTo(s1.get(shed).opsPerSec),
                micros(s1.get(l).latency, 50),
                micros(s1.get(l).latency, 99),
                s2.get(l).opsPerSec.spread(),
                s2.get(l).opsPerSec.ratioTo(s2.get(shed).opsPerSec)));
      }
      targets.atLeast(
          "JDBC lease row on PostgreSQL: ≥ 1.2 × ShedLock (S1, one thread)",
          Fmt.num(s1.get(dlock).opsPerSec.median())
              + " vs "
              + Fmt.num(s1.get(shed).opsPerSec.median())
              + " ops/s",
          s1.get(dlock).opsPerSec.median() / s1.get(shed).opsPerSec.median(),
          1.2);
      targets.atLeast(
          "JDBC lease row on PostgreSQL: ≥ 1.2 × ShedLock (S2, 16 threads)",
          Fmt.num(s2.get(dlock).opsPerSec.median())
              + " vs "
              + Fmt.num(s2.get(shed).opsPerSec.median())
              + " cycles/s",
          s2.get(dlock).opsPerSec.median() / s2.get(shed).opsPerSec.median(),
          1.2);
    } finally {
      lockers.forEach(Locker::close);
    }
  }

  static String serverVersion(String url) throws SQLException {
    try (Connection c = DriverManager.getConnection(url);
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SHOW server_version")) {
      rs.next();
      return rs.getString(1);
    }
  }
}
