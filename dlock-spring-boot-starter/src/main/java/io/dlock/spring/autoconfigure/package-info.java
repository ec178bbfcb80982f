/** The auto-configuration of the starter and its {@code dlock.*} properties. */
@NullMarked
package io.dlock.spring.autoconfigure;

import org.jspecify.annotations.NullMarked;
