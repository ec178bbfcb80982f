/**
 * The backend SPI: the few primitives a backend implements (try-acquire, release, batched renewal,
 * release signals). Waiting, deadlines, reentrancy, renewal scheduling, timeouts and listener
 * dispatch are written once, in {@code io.dlock.core}, over these primitives.
 */
@NullMarked
package io.dlock.spi;

import org.jspecify.annotations.NullMarked;
