/** Spring Integration's {@code LockRegistry} on dlock. */
@NullMarked
package io.dlock.spring.integration;

import org.jspecify.annotations.NullMarked;
