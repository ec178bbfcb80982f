/**
 * Tokens and dedup records on a relational database over plain JDBC: PostgreSQL, MySQL/MariaDB and
 * H2. Uniqueness is the primary key; expiry is judged by the database's clock; every statement is
 * parameterized, and table names are validated.
 */
@NullMarked
package io.dlock.idempotency.jdbc;

import org.jspecify.annotations.NullMarked;
