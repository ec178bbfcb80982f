/** Network faults for tests: a loopback TCP proxy that delays, silences and resets connections. */
@NullMarked
package io.dlock.testkit.net;

import org.jspecify.annotations.NullMarked;
