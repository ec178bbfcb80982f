/**
 * The JDBC backend: locks kept in a database table on PostgreSQL, MariaDB or H2, with expiry judged
 * by the database's clock and fencing tokens from a database sequence. Start with {@link
 * io.dlock.jdbc.JdbcLocks}; see {@code docs/jdbc.md} for the schema, the guarantees and the limits.
 */
@NullMarked
package io.dlock.jdbc;

import org.jspecify.annotations.NullMarked;
