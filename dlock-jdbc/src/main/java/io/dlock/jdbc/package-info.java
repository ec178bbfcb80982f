/**
 * The JDBC backend: locks kept in a database on PostgreSQL, MariaDB or H2, as lease rows judged by
 * the database's clock, as session (advisory) locks or as row locks held on a connection of their
 * own, with fencing tokens from a database sequence. Start with {@link io.dlock.jdbc.JdbcLocks};
 * see {@code docs/jdbc.md} for the schema, the guarantees and the limits.
 */
@NullMarked
package io.dlock.jdbc;

import org.jspecify.annotations.NullMarked;
