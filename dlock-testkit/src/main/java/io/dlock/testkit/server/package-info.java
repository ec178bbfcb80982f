/** Real servers started on free loopback ports, for tests and the embedded demo. */
@NullMarked
package io.dlock.testkit.server;

import org.jspecify.annotations.NullMarked;
