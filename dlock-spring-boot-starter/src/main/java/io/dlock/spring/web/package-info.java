/** The answers of Spring MVC and WebFlux to locks that were not acquired. */
@NullMarked
package io.dlock.spring.web;

import org.jspecify.annotations.NullMarked;
