/**
 * Tokens and dedup records on Redis (single server or Sentinel-managed primary, through Lettuce):
 * each operation is one Lua script, run atomically by the server; expiry is the server's TTL.
 */
@NullMarked
package io.dlock.idempotency.redis;

import org.jspecify.annotations.NullMarked;
