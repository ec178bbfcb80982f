/**
 * What dlock's Spring Boot modules share about the application's beans: {@link
 * io.dlock.spring.support.BeanChoice} (which bean to build on) and {@link
 * io.dlock.spring.support.LettuceServer} (the server a Spring Data {@code LettuceConnectionFactory}
 * reaches). Not an API for applications: its types may change with the modules that use them.
 */
@NullMarked
package io.dlock.spring.support;

import org.jspecify.annotations.NullMarked;
