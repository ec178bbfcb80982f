package io.dlock.examples.mysql;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * The optimistic stock deduction done right: no lock at all, one conditional {@code UPDATE} that
 * checks and writes in a single statement, and a bounded number of attempts.
 *
 * <p>Each attempt reads the row's stock and version, returns {@link Outcome#INSUFFICIENT_STOCK} if
 * the stock does not cover the order, and otherwise runs
 *
 * <pre>{@code
 * UPDATE ex_stock SET stock = stock - ?, version = version + 1
 *  WHERE sku = ? AND version = ? AND stock >= ?
 * }</pre>
 *
 * <p>The database applies it to the row only if nobody changed the row since the read (the version)
 * and the stock still covers the order (the quantity), atomically under the row's lock: two buyers
 * can both read 4, but only the first of their updates matches; the second changes no row (update
 * count 0), and this class reads again and decides on the new stock. The quantity condition makes
 * the statement safe on its own, whatever the caller checked before. Every value is a parameter,
 * never concatenated into the SQL.
 *
 * <p>Each lost race costs one more attempt; after {@code maxAttempts} the deduction gives up with
 * {@link Outcome#CONFLICT} instead of retrying for ever, so that a hot row under sustained
 * contention yields an answer (try later, or queue the order) within a known number of round trips.
 */
public final class StockDeduction {
  /** The largest quantity one deduction takes. */
  public static final long MAX_QUANTITY = 1_000_000;

  /** The most attempts a deduction may be allowed. */
  public static final int MAX_ATTEMPTS = 100;

  /** The longest SKU, as in {@link StockTable}. */
  public static final int MAX_SKU_LENGTH = 64;

  /** How a deduction ended. */
  public enum Outcome {
    /** The stock was taken: exactly one conditional update matched. */
    DEDUCTED,
    /** The stock, as read by the last attempt, does not cover the quantity; nothing was taken. */
    INSUFFICIENT_STOCK,
    /** Every attempt lost its race to another writer of the row; nothing was taken. */
    CONFLICT
  }

  /** The outcome and how many attempts (reads) it took. */
  public record Result(Outcome outcome, int attempts) {}

  private static final String DEDUCT =
      "UPDATE "
          + StockTable.TABLE
          + " SET stock = stock - ?, version = version + 1"
          + " WHERE sku = ? AND version = ? AND stock >= ?";

  private final DataSource dataSource;
  private final int maxAttempts;
  private final BetweenReadAndWrite betweenReadAndWrite;

  /**
   * A deduction over the stock table of {@code dataSource}.
   *
   * @param maxAttempts from 1 to {@value #MAX_ATTEMPTS}: how many times a deduction reads and tries
   *     its conditional update before it answers {@link Outcome#CONFLICT}
   * @throws IllegalArgumentException naming the parameter and its range
   */
  public StockDeduction(DataSource dataSource, int maxAttempts) {
    this(dataSource, maxAttempts, BetweenReadAndWrite.NOTHING);
  }

  StockDeduction(DataSource dataSource, int maxAttempts, BetweenReadAndWrite betweenReadAndWrite) {
    this.dataSource = Objects.requireNonNull(dataSource, "dataSource");
    if (maxAttempts < 1 || maxAttempts > MAX_ATTEMPTS) {
      throw new IllegalArgumentException(
          "maxAttempts must be from 1 to " + MAX_ATTEMPTS + ", but was " + maxAttempts);
    }
    this.maxAttempts = maxAttempts;
    this.betweenReadAndWrite = betweenReadAndWrite;
  }

  /**
   * Takes {@code quantity} units of {@code sku} from the stock if the stock covers them.
   *
   * @param sku 1 to {@value #MAX_SKU_LENGTH} characters, no control characters
   * @param quantity from 1 to {@value #MAX_QUANTITY}
   * @return {@link Outcome#DEDUCTED} if exactly this quantity was taken, otherwise why nothing was
   * @throws IllegalArgumentException naming the parameter and its allowed range
   * @throws IllegalStateException if the SKU has no stock row
   * @throws SQLException if the database fails; nothing was taken unless an update's answer was
   *     lost with the connection
   */
  public Result deduct(String sku, long quantity) throws SQLException {
    checkSku(sku);
    if (quantity < 1 || quantity > MAX_QUANTITY) {
      throw new IllegalArgumentException(
          "quantity must be from 1 to " + MAX_QUANTITY + ", but was " + quantity);
    }
    try (Connection c = dataSource.getConnection()) {
      for (int attempt = 1; attempt <= maxAttempts; attempt++) {
        StockTable.StockRow row = StockTable.read(c, sku);
        if (row.stock() < quantity) {
          return new Result(Outcome.INSUFFICIENT_STOCK, attempt);
        }
        runBetweenReadAndWrite(attempt);
        try (PreparedStatement update = c.prepareStatement(DEDUCT)) {
          update.setLong(1, quantity);
          update.setString(2, sku);
          update.setLong(3, row.version());
          update.setLong(4, quantity);
          if (update.executeUpdate() == 1) {
            return new Result(Outcome.DEDUCTED, attempt);
          }
        }
        // Update count 0: the row changed since the read. Read again and decide on the new row.
      }
      return new Result(Outcome.CONFLICT, maxAttempts);
    }
  }

  private void runBetweenReadAndWrite(int attempt) throws SQLException {
    try {
      betweenReadAndWrite.run(attempt);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SQLException("interrupted between the read and the update", e);
    } catch (Exception e) {
      throw new SQLException("abandoned between the read and the update: " + e, e);
    }
  }

  static void checkSku(String sku) {
    Objects.requireNonNull(sku, "sku");
    if (sku.isEmpty()
        || sku.length() > MAX_SKU_LENGTH
        || sku.chars().anyMatch(Character::isISOControl)) {
      throw new IllegalArgumentException(
          "sku must have 1 to "
              + MAX_SKU_LENGTH
              + " characters without control characters, but was '"
              + sku.replaceAll("\\p{Cntrl}", "?")
              + "' ("
              + sku.length()
              + " characters)");
    }
  }
}
