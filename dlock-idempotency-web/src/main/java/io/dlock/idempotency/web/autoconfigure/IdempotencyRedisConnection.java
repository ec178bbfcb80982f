package io.dlock.idempotency.web.autoconfigure;

import io.dlock.idempotency.redis.RedisIdempotency;

/**
 * The Redis connection of the records {@link IdempotencyKeyAutoConfiguration} made, held by a type
 * of its own so that it never takes the place of, or competes for injection with, a {@code
 * RedisIdempotency} bean of the application. Closed with the context; closing it leaves the
 * application's connection factory and its Lettuce resources running.
 */
final class IdempotencyRedisConnection implements AutoCloseable {
  private final RedisIdempotency redis;

  IdempotencyRedisConnection(RedisIdempotency redis) {
    this.redis = redis;
  }

  RedisIdempotency redis() {
    return redis;
  }

  @Override
  public void close() {
    redis.close();
  }
}
