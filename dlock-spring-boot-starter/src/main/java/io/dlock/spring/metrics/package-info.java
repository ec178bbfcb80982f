/** Metrics of the locks the starter takes; Micrometer when it is on the class path. */
@NullMarked
package io.dlock.spring.metrics;

import org.jspecify.annotations.NullMarked;
