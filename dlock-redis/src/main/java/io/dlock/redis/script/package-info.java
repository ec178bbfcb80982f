/**
 * Building blocks for the dlock modules that talk to Redis (this module's lock backends, the Redis
 * stores of dlock-idempotency): not the lock API. Applications use {@link
 * io.dlock.redis.RedisLocks} or the settings and backends of {@code io.dlock.redis}; these types
 * may change between versions.
 */
@NullMarked
package io.dlock.redis.script;

import org.jspecify.annotations.NullMarked;
