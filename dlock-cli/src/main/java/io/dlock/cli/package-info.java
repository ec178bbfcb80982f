/** The {@code dlock} command: run, status, release, demo. */
@NullMarked
package io.dlock.cli;

import org.jspecify.annotations.NullMarked;
