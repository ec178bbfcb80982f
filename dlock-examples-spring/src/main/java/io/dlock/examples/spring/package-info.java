/** The flash sale as a Spring Boot service guarded by {@code @Locked}. */
@NullMarked
package io.dlock.examples.spring;

import org.jspecify.annotations.NullMarked;
