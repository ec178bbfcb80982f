package io.dlock.examples;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;

/**
 * The shop's stock, kept in Redis so that every process sees the same number. Buying is the
 * articles' check-then-act: read the stock, check it covers the order, take a moment to process the
 * payment, then decrement. Without a lock two buyers can pass the check on the same stock.
 */
final class Store implements AutoCloseable {
  private final RedisClient client;
  private final StatefulRedisConnection<String, String> connection;
  private final RedisCommands<String, String> redis;
  private final String stockKey;

  Store(String redisUri, String sku) {
    this.client = RedisClient.create(redisUri);
    this.connection = client.connect();
    this.redis = connection.sync();
    this.stockKey = "flash-sale:stock:" + sku;
  }

  void setStock(long items) {
    redis.set(stockKey, Long.toString(items));
  }

  long stock() {
    String value = redis.get(stockKey);
    return value == null ? 0 : Long.parseLong(value);
  }

  /**
   * Buys {@code items} if the stock covers them.
   *
   * @return the stock left after this purchase (negative once oversold), or empty if the stock did
   *     not cover it and nothing was bought
   */
  OptionalLong buy(long items, Duration paymentTime) throws InterruptedException {
    if (stock() < items) {
      return OptionalLong.empty();
    }
    // The payment takes a moment: the window in which an unlocked competitor reads stale stock.
    TimeUnit.NANOSECONDS.sleep(paymentTime.toNanos());
    return OptionalLong.of(redis.decrby(stockKey, items));
  }

  /**
   * The lock-free way: one atomic conditional decrement on the server ({@code if stock >= items
   * then DECRBY}), the Redis form of {@code UPDATE stock SET n = n - ? WHERE id = ? AND n >= ?}. It
   * cannot oversell and needs no lock, because the check and the write are one step.
   *
   * @return the stock left after this purchase, or empty if the stock did not cover it
   */
  OptionalLong buyConditionally(long items, Duration paymentTime) throws InterruptedException {
    // The payment happens before the decrement here; a real shop would refund on failure.
    TimeUnit.NANOSECONDS.sleep(paymentTime.toNanos());
    Long left =
        redis.eval(
            "local n = tonumber(redis.call('GET', KEYS[1]) or '0')"
                + " if n >= tonumber(ARGV[1]) then return redis.call('DECRBY', KEYS[1], ARGV[1]) end"
                + " return -1",
            io.lettuce.core.ScriptOutputType.INTEGER,
            new String[] {stockKey},
            Long.toString(items));
    return left < 0 ? OptionalLong.empty() : OptionalLong.of(left);
  }

  @Override
  public void close() {
    connection.close();
    client.shutdown();
  }
}
