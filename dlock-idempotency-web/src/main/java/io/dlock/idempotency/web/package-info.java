/**
 * The {@code Idempotency-Key} HTTP header for Spring MVC: {@link
 * io.dlock.idempotency.web.IdempotencyKeyFilter} stores the first response to a keyed request in a
 * dedup record and replays it to retries.
 */
@NullMarked
package io.dlock.idempotency.web;

import org.jspecify.annotations.NullMarked;
