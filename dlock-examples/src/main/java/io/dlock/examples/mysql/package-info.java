/**
 * The three database locks of the articles this project comes from, on MySQL-family SQL (tested on
 * MariaDB), each next to the flawed version the articles show.
 *
 * <ul>
 *   <li>The lock table (a unique-key row inserted to lock, deleted to unlock): {@link
 *       io.dlock.examples.mysql.FlawedLockTable}, done right by {@link
 *       io.dlock.examples.mysql.LeaseRowLockTable} (dlock-jdbc's lease rows), with {@link
 *       io.dlock.examples.mysql.FencedStock} rejecting the writes of a holder whose lease ran out.
 *   <li>The {@code SELECT ... FOR UPDATE} row lock: {@link io.dlock.examples.mysql.FlawedRowLock},
 *       {@link io.dlock.examples.mysql.FlawedEmptyResultRowLock} and {@link
 *       io.dlock.examples.mysql.FlawedAutocommitRowLock}, done right by {@link
 *       io.dlock.examples.mysql.ForUpdateRowLock} (dlock-jdbc's row mode).
 *   <li>The optimistic, version-checked stock deduction: {@link
 *       io.dlock.examples.mysql.FlawedStockDeduction} and {@link
 *       io.dlock.examples.mysql.FlawedVersionedStockDeduction}, done right by {@link
 *       io.dlock.examples.mysql.StockDeduction}.
 * </ul>
 *
 * <p>The classes named {@code Flawed...} reproduce a mistake so that a test can show it happening;
 * they must not be used. {@code dlock-examples/README.md} maps each flaw to its test and its fix.
 */
package io.dlock.examples.mysql;
