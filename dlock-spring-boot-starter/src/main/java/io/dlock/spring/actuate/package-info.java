/** The Actuator side: the {@code locks} endpoint and the backend health indicator. */
@NullMarked
package io.dlock.spring.actuate;

import org.jspecify.annotations.NullMarked;
