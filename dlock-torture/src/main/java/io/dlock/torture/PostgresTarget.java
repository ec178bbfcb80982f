package io.dlock.torture;

import io.dlock.testkit.server.PostgresServerProcess;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A PostgreSQL server of this run's own, with {@code synchronous_commit} on so that a committed
 * grant survives a crash of the server process, in one of dlock-jdbc's modes: lease rows (the
 * default), session (advisory) locks or row locks. A restart is an immediate shutdown (SIGQUIT,
 * connections drop as in a crash) followed by a start with crash recovery.
 */
final class PostgresTarget implements Target {
  private final PostgresServerProcess server = PostgresServerProcess.startDurable();
  private final String mode;

  /**
   * @param mode {@code lease-row}, {@code session} or {@code row}
   */
  PostgresTarget(String mode) {
    this.mode = mode;
  }

  @Override
  public String name() {
    return mode.equals("lease-row") ? "postgres" : "postgres-" + mode;
  }

  @Override
  public List<InetSocketAddress> servers() {
    return List.of(new InetSocketAddress("127.0.0.1", server.port()));
  }

  @Override
  public String uri(List<Integer> ports) {
    return "jdbc:postgresql://127.0.0.1:" + ports.get(0) + "/postgres?user=postgres";
  }

  @Override
  public Map<String, String> properties(Duration lease) {
    return Map.of("mode", mode, "createSchema", "true");
  }

  @Override
  public Duration holdAfterDeath(Duration lease) {
    return JdbcModes.holdAfterDeath(mode, lease);
  }

  @Override
  public void restart() {
    server.stop();
    server.start();
  }

  @Override
  public String restartDescription() {
    return "PostgreSQL stopped in immediate mode (SIGQUIT) and started again with crash recovery";
  }

  @Override
  public void close() {
    server.close();
  }
}
