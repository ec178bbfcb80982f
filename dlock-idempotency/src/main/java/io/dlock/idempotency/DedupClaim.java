package io.dlock.idempotency;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This caller's in-progress claim of a key: complete it with the result of the work, or fail it so
 * that the next caller runs the work again. Single use; {@link #close()} fails a claim that was
 * neither completed nor failed, so a try-with-resources block never leaves it to expire.
 *
 * <p>If the work outlived the in-progress timeout, another caller may have taken the key over:
 * {@link #complete} and {@link #fail} then return false and change nothing.
 *
 * <p>A {@link #complete} or {@link #fail} that throws {@link IdempotencyStoreException} may or may
 * not have reached the store; it leaves the claim open, so the same call can be retried (a repeat
 * of a completion that did happen returns true and changes nothing), and {@link #close()} still
 * fails a claim left open.
 */
public final class DedupClaim implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(DedupClaim.class);

  private final DedupStore store;
  private final String key;
  private final String owner;
  private final Duration retention;
  private final Duration failedRetention;
  private static final int OPEN = 0;
  private static final int FINISHING = 1;
  private static final int FINISHED = 2;

  private final AtomicInteger state = new AtomicInteger(OPEN);

  DedupClaim(
      DedupStore store, String key, String owner, Duration retention, Duration failedRetention) {
    this.store = store;
    this.key = key;
    this.owner = owner;
    this.retention = retention;
    this.failedRetention = failedRetention;
  }

  /** The key claimed. */
  public String key() {
    return key;
  }

  /**
   * Stores {@code result} as the key's outcome, kept for the retention.
   *
   * @return false if the claim had expired and the record is no longer this caller's
   * @throws IllegalStateException if the claim was already completed or failed
   * @throws IdempotencyStoreException if the store failed: the result may or may not be stored; the
   *     claim stays open, so retry {@code complete} (or {@link #close()} fails it). A record left
   *     in progress blocks the key until its timeout, and the work may run again after it
   */
  public boolean complete(byte[] result) {
    boolean done = finish("complete", () -> store.complete(key, owner, result, retention));
    if (!done) {
      log.warn(
          "Dedup record {} expired while its work ran: it may run again; raise the in-progress"
              + " timeout above the work's longest run",
          key);
    }
    return done;
  }

  /**
   * Marks the claim failed: the next caller with this key runs the work again.
   *
   * @return false if the claim had expired and the record is no longer this caller's
   * @throws IllegalStateException if the claim was already completed or failed
   * @throws IdempotencyStoreException if the store failed; the claim stays open, retry {@code fail}
   */
  public boolean fail() {
    return finish("fail", () -> store.fail(key, owner, failedRetention));
  }

  /** Fails the claim unless it was completed or failed already; a store error is logged. */
  @Override
  public void close() {
    if (state.compareAndSet(OPEN, FINISHED)) {
      try {
        store.fail(key, owner, failedRetention);
      } catch (RuntimeException e) {
        log.warn("Could not mark dedup record {} failed; it expires after its timeout", key, e);
      }
    }
  }

  private boolean finish(String what, BooleanSupplier call) {
    if (!state.compareAndSet(OPEN, FINISHING)) {
      throw new IllegalStateException(
          "Cannot "
              + what
              + " the claim of "
              + key
              + ": it was already completed or failed, or is being");
    }
    boolean done;
    try {
      done = call.getAsBoolean();
    } catch (IdempotencyStoreException e) {
      // The outcome is unknown: the store's finish is safe to repeat, so let the caller retry.
      state.set(OPEN);
      throw e;
    }
    state.set(FINISHED);
    return done;
  }
}
