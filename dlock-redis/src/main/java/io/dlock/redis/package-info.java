/**
 * The Redis backend, on Lettuce: {@code SET NX PX} with an owner token and a fencing counter in one
 * script, compare-and-delete release with a pub/sub wake-up, batched renewal.
 */
@NullMarked
package io.dlock.redis;

import org.jspecify.annotations.NullMarked;
