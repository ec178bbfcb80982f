/**
 * Updates that need no lock: a {@link io.dlock.idempotency.update.ConditionalUpdate} whose {@code
 * WHERE} clause carries the business rule ({@code UPDATE stock SET n = n - ? WHERE id = ? AND n >=
 * ?}), and a {@link io.dlock.idempotency.update.VersionCheckedUpdate} (optimistic: read a value and
 * its version, write only if the version is unchanged, retry with jittered backoff).
 */
@NullMarked
package io.dlock.idempotency.update;

import org.jspecify.annotations.NullMarked;
