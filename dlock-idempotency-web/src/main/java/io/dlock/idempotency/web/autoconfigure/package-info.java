/** Spring Boot auto-configuration of the {@code Idempotency-Key} filter. */
@NullMarked
package io.dlock.idempotency.web.autoconfigure;

import org.jspecify.annotations.NullMarked;
