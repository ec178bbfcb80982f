/**
 * The contract suite every backend runs ({@link io.dlock.testkit.LockContractTest}), timing that
 * scales with one system property ({@link io.dlock.testkit.TestTiming}), and real-server fixtures.
 */
@NullMarked
package io.dlock.testkit;

import org.jspecify.annotations.NullMarked;
