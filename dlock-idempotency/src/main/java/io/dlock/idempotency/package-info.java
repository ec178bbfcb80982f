/**
 * Idempotency without locks: {@link io.dlock.idempotency.TokenStore one-time tokens} consumed
 * exactly once, and {@link io.dlock.idempotency.DedupRecords dedup records} that run an action once
 * per key and store its result. Backends: {@code io.dlock.idempotency.redis} and {@code
 * io.dlock.idempotency.jdbc}; conditional and version-checked updates: {@code
 * io.dlock.idempotency.update}.
 */
@NullMarked
package io.dlock.idempotency;

import org.jspecify.annotations.NullMarked;
