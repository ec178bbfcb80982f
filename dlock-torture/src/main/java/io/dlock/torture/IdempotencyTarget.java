package io.dlock.torture;

import io.dlock.testkit.server.PostgresServerProcess;
import io.dlock.testkit.server.RedisServerProcess;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * dlock-idempotency's store (tokens and dedup claims) on a server of its own: Redis ({@code
 * idempotency-redis}) or PostgreSQL ({@code idempotency-postgres}). Not a lock backend: its runs
 * are {@link IdempotencyRun}s, checked against a ledger of requests.
 */
final class IdempotencyTarget implements Target {
  private final String store;
  private final RedisServerProcess redis;
  private final PostgresServerProcess postgres;
  private final boolean freshIds;

  /**
   * @param store {@code redis} or {@code postgres}
   * @param freshIds the negative control: a retry is sent with a new request id, as by a caller
   *     that ignores the retry rule; replies lost then turn into requests refused by their own
   *     earlier attempt, which the run must find
   */
  IdempotencyTarget(String store, boolean freshIds) {
    this.store = store;
    this.freshIds = freshIds;
    this.redis = store.equals("redis") ? RedisServerProcess.start() : null;
    this.postgres = store.equals("postgres") ? PostgresServerProcess.startDurable() : null;
  }

  boolean freshIds() {
    return freshIds;
  }

  boolean redis() {
    return redis != null;
  }

  @Override
  public String name() {
    return "idempotency-" + store + (freshIds ? "-fresh-ids" : "");
  }

  @Override
  public boolean ledger() {
    return true;
  }

  @Override
  public List<Scenario> defaultScenarios() {
    return List.of(Scenario.DROPPED_REPLIES);
  }

  @Override
  public List<InetSocketAddress> servers() {
    return List.of(
        new InetSocketAddress("127.0.0.1", redis != null ? redis.port() : postgres.port()));
  }

  @Override
  public String uri(List<Integer> ports) {
    return redis != null
        ? "redis://127.0.0.1:" + ports.get(0)
        : "jdbc:postgresql://127.0.0.1:" + ports.get(0) + "/postgres?user=postgres";
  }

  @Override
  public Map<String, String> properties(Duration lease) {
    return Map.of();
  }

  @Override
  public Duration holdAfterDeath(Duration lease) {
    return lease;
  }

  @Override
  public boolean restartable() {
    return false;
  }

  @Override
  public void restart() {
    throw new UnsupportedOperationException("the idempotency runs drop replies, not servers");
  }

  @Override
  public String restartDescription() {
    return "not restarted";
  }

  @Override
  public void close() {
    if (redis != null) {
      redis.close();
    } else {
      postgres.close();
    }
  }
}
