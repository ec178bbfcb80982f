/**
 * Tokens and dedup records on Redis (single server or Sentinel-managed primary, through Lettuce):
 * each operation is one Lua script, run atomically by the server; expiry is the server's TTL. The
 * scripts are called through dlock-redis's {@link io.dlock.redis.script.RedisScript}: an
 * application using these stores puts {@code dlock-redis} on its class path (it brings Lettuce).
 */
@NullMarked
package io.dlock.idempotency.redis;

import org.jspecify.annotations.NullMarked;
