package io.dlock.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a {@code long} parameter of a {@link Locked} method that receives the fencing token of the
 * grant; the value the caller passed is replaced. Pass it to the protected resource so that it
 * rejects writes of a holder whose lease was lost (see {@link io.dlock.Lease#fencingToken()}).
 */
@Target(ElementType.PARAMETER)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface FencingToken {}
