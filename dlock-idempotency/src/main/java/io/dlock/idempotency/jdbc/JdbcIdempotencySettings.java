package io.dlock.idempotency.jdbc;

import io.dlock.idempotency.Tokens;
import java.time.Duration;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Where and how the JDBC stores keep their rows. An immutable value; the {@code with...} methods
 * return modified copies and validate their argument.
 *
 * <p>Defaults: tables {@code dlock_idem_tokens} and {@code dlock_idem_dedup} (prefix {@code
 * dlock_idem_}), not created automatically, statements time out after 5 s, token tombstones kept 24
 * h.
 */
public final class JdbcIdempotencySettings {
  private static final Pattern TABLE_PREFIX =
      Pattern.compile("([A-Za-z_][A-Za-z0-9_]{0,62}\\.)?[A-Za-z_][A-Za-z0-9_]{0,40}");

  private final String tablePrefix;
  private final boolean createSchema;
  private final Duration statementTimeout;
  private final Duration tokenRetention;

  private JdbcIdempotencySettings(
      String tablePrefix,
      boolean createSchema,
      Duration statementTimeout,
      Duration tokenRetention) {
    this.tablePrefix = tablePrefix;
    this.createSchema = createSchema;
    this.statementTimeout = statementTimeout;
    this.tokenRetention = tokenRetention;
  }

  public static JdbcIdempotencySettings defaults() {
    return new JdbcIdempotencySettings(
        "dlock_idem_", false, Duration.ofSeconds(5), Duration.ofHours(24));
  }

  /**
   * The same settings with this table prefix: the tables are {@code prefix + "tokens"} and {@code
   * prefix + "dedup"}.
   *
   * @param tablePrefix an optional schema and a dot, then a letter or underscore and up to 40
   *     letters, digits or underscores (validated, because table names cannot be parameters)
   */
  public JdbcIdempotencySettings withTablePrefix(String tablePrefix) {
    Objects.requireNonNull(tablePrefix, "tablePrefix");
    if (!TABLE_PREFIX.matcher(tablePrefix).matches()) {
      throw new IllegalArgumentException(
          "tablePrefix must be [schema.]name of letters, digits and underscores (name 1 to 41"
              + " characters, not starting with a digit), but was '"
              + tablePrefix
              + "'");
    }
    return new JdbcIdempotencySettings(tablePrefix, createSchema, statementTimeout, tokenRetention);
  }

  /** The same settings, creating the tables on first use if they do not exist. */
  public JdbcIdempotencySettings withCreateSchema(boolean createSchema) {
    return new JdbcIdempotencySettings(tablePrefix, createSchema, statementTimeout, tokenRetention);
  }

  /**
   * The same settings with this statement timeout.
   *
   * @param timeout from 1 s to 5 min (JDBC query timeouts are whole seconds)
   */
  public JdbcIdempotencySettings withStatementTimeout(Duration timeout) {
    return new JdbcIdempotencySettings(
        tablePrefix,
        createSchema,
        Tokens.checkRange(
            "statementTimeout", timeout, Duration.ofSeconds(1), Duration.ofMinutes(5)),
        tokenRetention);
  }

  /**
   * The same settings with this token retention: how long a consumed token is remembered as
   * consumed, and an expired one as expired, before {@link JdbcIdempotency#purgeExpired()} may
   * delete it.
   *
   * @param retention from 100 ms to 400 days
   */
  public JdbcIdempotencySettings withTokenRetention(Duration retention) {
    return new JdbcIdempotencySettings(
        tablePrefix,
        createSchema,
        statementTimeout,
        Tokens.checkRange(
            "tokenRetention", retention, Duration.ofMillis(100), Duration.ofDays(400)));
  }

  public String tablePrefix() {
    return tablePrefix;
  }

  public String tokensTable() {
    return tablePrefix + "tokens";
  }

  public String dedupTable() {
    return tablePrefix + "dedup";
  }

  public boolean createSchema() {
    return createSchema;
  }

  public Duration statementTimeout() {
    return statementTimeout;
  }

  public Duration tokenRetention() {
    return tokenRetention;
  }
}
