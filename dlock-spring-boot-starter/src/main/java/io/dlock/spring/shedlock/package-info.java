/** ShedLock's {@code LockProvider} on dlock. */
@NullMarked
package io.dlock.spring.shedlock;

import org.jspecify.annotations.NullMarked;
