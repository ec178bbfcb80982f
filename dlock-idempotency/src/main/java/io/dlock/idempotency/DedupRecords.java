package io.dlock.idempotency;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Dedup records: run an action once per key and remember its result, so that a retried request gets
 * the first one's answer instead of doing the work twice. Backed by a key the store keeps unique (a
 * primary key on a database, a Lua-guarded key on Redis). An immutable value; the {@code with...}
 * methods return modified copies and validate their argument.
 *
 * <p>Guarantees, per key, while its record is retained:
 *
 * <ul>
 *   <li>one caller at a time owns the key's work; concurrent callers get {@link
 *       RunOnceResult.InProgress} (never a second execution);
 *   <li>a completed action's result is stored and {@link RunOnceResult.Replayed replayed};
 *   <li>an action that throws marks the record failed, and the next call runs it again;
 *   <li>a caller that crashes mid-action leaves an in-progress record that expires after the {@link
 *       #withInProgressTimeout in-progress timeout} (judged by the store's clock); the next call
 *       after that runs the action again. The timeout must exceed the action's longest run, or a
 *       slow action may run twice.
 * </ul>
 *
 * <p><b>Retrying a call whose answer was lost.</b> A claim (or a completion) can reach the store
 * and its answer be lost (a connection reset, a timeout): the call throws {@link
 * IdempotencyStoreException}, although the key may now be claimed by it. Every claim carries a
 * request id, and a repeat of a claim with the same request id gets the first one's outcome: a
 * claim whose answer never reached its caller is the repeat's own ({@link ClaimOutcome.Claimed}),
 * not {@link ClaimOutcome.InProgress}; a completed one is {@link ClaimOutcome.Completed}. A claim
 * whose caller was answered is never handed to a repeat: the call confirms its claim in the store
 * before it answers (one more round trip), and a repeat of the request while that caller still
 * works is {@link ClaimOutcome.InProgress}, like any other caller. So a caller may retry a request
 * with its request id whether the first attempt failed or still runs (an upstream timeout): the
 * work runs once. A caller that may retry passes its own request id ({@link #claim(String, String,
 * String)}, {@link #firstTime(String, String)}, {@link #runOnce(String, String, ResultCodec,
 * IdempotentAction)}), chosen once per request and used on every retry of it (a message's delivery
 * id, an id made when the request arrived). The methods without one draw a fresh id per call (and
 * need no confirmation): a repeat inside the store (a client library re-sending after a reconnect)
 * is recognised, but the caller's own retry is another request, told {@link
 * RunOnceResult.InProgress} until the lost claim's timeout. A confirmation whose answer is lost is
 * repeated by the same attempt within the call (a repeat is harmless: it confirms only this
 * attempt's claim), so a reset connection costs a short delay, not the call. If every repeat fails,
 * the call throws and the work does not run; the claim is given back (failed, repeated the same
 * way), and only if that fails too is a retry in progress until the claim's timeout (late, never
 * twice: the store cannot tell an attempt that gave up from one that runs). Never share a request
 * id between different requests: they would be one request to the store.
 *
 * <p>Defaults: in-progress timeout 60 s, retention of completed records 24 h, failed records kept 1
 * h (for inspection; they never block a retry).
 */
public final class DedupRecords {

  /** The longest key accepted, in characters. */
  public static final int MAX_KEY_LENGTH = 200;

  /** The longest fingerprint accepted, in characters. */
  public static final int MAX_FINGERPRINT_LENGTH = 128;

  /** The shortest in-progress timeout and retention accepted. */
  public static final Duration MIN_DURATION = Duration.ofMillis(100);

  /** The longest in-progress timeout accepted. */
  public static final Duration MAX_IN_PROGRESS_TIMEOUT = Duration.ofDays(1);

  /** The longest retention accepted. */
  public static final Duration MAX_RETENTION = Duration.ofDays(400);

  /**
   * The pauses before each repeat of a store call whose answer was lost, in milliseconds: 9 tries
   * within about 550 ms, enough to outlast a client library's reconnection after a reset (Lettuce:
   * one tick of its 100 ms timer, sometimes two) without holding the caller long. The claim being
   * confirmed is not taken over meanwhile except by its own request's retry, which then does the
   * work instead.
   */
  private static final long[] REPEAT_PAUSES_MILLIS = {10, 20, 40, 80, 100, 100, 100, 100};

  /** How many times {@link #repeated} sends a call at most: the first try and its repeats. */
  static final int STORE_CALL_TRIES = REPEAT_PAUSES_MILLIS.length + 1;

  /**
   * No repeat starts later than this after the first failure: on a silent store each try waits its
   * whole timeout, and nine of them would hold the caller nine times the store's bound. With it, a
   * call that timed out is repeated at most once more.
   */
  static final Duration REPEAT_WINDOW = Duration.ofMillis(600);

  private final DedupStore store;
  private final Duration inProgressTimeout;
  private final Duration retention;
  private final Duration failedRetention;

  private DedupRecords(
      DedupStore store, Duration inProgressTimeout, Duration retention, Duration failedRetention) {
    this.store = store;
    this.inProgressTimeout = inProgressTimeout;
    this.retention = retention;
    this.failedRetention = failedRetention;
  }

  /** Dedup records on {@code store}, with the default timeout and retentions. */
  public static DedupRecords on(DedupStore store) {
    return new DedupRecords(
        Objects.requireNonNull(store, "store"),
        Duration.ofSeconds(60),
        Duration.ofHours(24),
        Duration.ofHours(1));
  }

  /**
   * The same records with this in-progress timeout: how long a claim blocks other callers before it
   * is taken to be abandoned (a crashed owner).
   *
   * @param timeout from {@link #MIN_DURATION} to {@link #MAX_IN_PROGRESS_TIMEOUT}
   */
  public DedupRecords withInProgressTimeout(Duration timeout) {
    return new DedupRecords(
        store,
        Tokens.checkRange("inProgressTimeout", timeout, MIN_DURATION, MAX_IN_PROGRESS_TIMEOUT),
        retention,
        failedRetention);
  }

  /**
   * The same records with this retention of completed records: how long a key's result is replayed
   * (and its work not repeated).
   *
   * @param retention from {@link #MIN_DURATION} to {@link #MAX_RETENTION}
   */
  public DedupRecords withRetention(Duration retention) {
    return new DedupRecords(
        store,
        inProgressTimeout,
        Tokens.checkRange("retention", retention, MIN_DURATION, MAX_RETENTION),
        failedRetention);
  }

  /**
   * The same records with this retention of failed records (kept for inspection only).
   *
   * @param retention from {@link #MIN_DURATION} to {@link #MAX_RETENTION}
   */
  public DedupRecords withFailedRetention(Duration retention) {
    return new DedupRecords(
        store,
        inProgressTimeout,
        this.retention,
        Tokens.checkRange("failedRetention", retention, MIN_DURATION, MAX_RETENTION));
  }

  public Duration inProgressTimeout() {
    return inProgressTimeout;
  }

  public Duration retention() {
    return retention;
  }

  public Duration failedRetention() {
    return failedRetention;
  }

  /**
   * True exactly once per key while its record is retained: the first caller gets true (and the
   * record is completed at once), every later or concurrent caller false. For work that needs no
   * stored result, such as handling a message id once.
   *
   * @param key 1 to {@value #MAX_KEY_LENGTH} characters, no control characters
   * @throws IdempotencyStoreException if the store failed
   */
  public boolean firstTime(String key) {
    ClaimOutcome outcome = claim(key, "");
    if (outcome instanceof ClaimOutcome.Claimed claimed) {
      // False if the claim expired before its completion and another caller took the key: that
      // caller was told it is the first (closing fails a claim whose completion threw).
      try (DedupClaim claim = claimed.claim()) {
        return claim.complete(new byte[0]);
      }
    }
    return false;
  }

  /**
   * True for the first request that asks for {@code key}, and for every repeat of that request
   * (same {@code requestId}) while the record is retained; false for every other request, and false
   * if this call's claim expired before it was completed and another request took the key. Retry a
   * call that threw with the same request id to learn its outcome.
   *
   * @param key 1 to {@value #MAX_KEY_LENGTH} characters, no control characters
   * @param requestId 1 to {@value Tokens#MAX_REQUEST_ID_LENGTH} characters, no control characters;
   *     the same on every retry of one request, never shared between requests
   * @throws IdempotencyStoreException if the store failed; retry with the same request id
   */
  public boolean firstTime(String key, String requestId) {
    ClaimOwner owner = ClaimOwner.newAttempt(Tokens.requestIdHash(requestId));
    // The record stores the request as its result: a repeat that finds the record completed can
    // then tell its own completion (a lost answer) from another request's.
    byte[] mark = owner.request().getBytes(StandardCharsets.US_ASCII);
    ClaimOutcome outcome = claimAs(key, "", owner);
    if (outcome instanceof ClaimOutcome.Claimed claimed) {
      // False if the claim expired before its completion and another request took the key: that
      // request was told it is the first (closing fails a claim whose completion threw, so that a
      // retry can claim the key again at once).
      try (DedupClaim claim = claimed.claim()) {
        return claim.complete(mark);
      }
    }
    return outcome instanceof ClaimOutcome.Completed completed
        && Arrays.equals(completed.result(), mark);
  }

  /** {@link #runOnce(String, ResultCodec, IdempotentAction)} with a text result. */
  public RunOnceResult<String> runOnce(String key, IdempotentAction<String> action) {
    return runOnce(key, ResultCodec.STRING, action);
  }

  /** {@link #runOnce(String, String, ResultCodec, IdempotentAction)} with a text result. */
  public RunOnceResult<String> runOnce(
      String key, String requestId, IdempotentAction<String> action) {
    return runOnce(key, requestId, ResultCodec.STRING, action);
  }

  /**
   * {@link #runOnce(String, ResultCodec, IdempotentAction)} for the request {@code requestId}: a
   * retry of a call that threw (its claim or its completion may have reached the store) with the
   * same request id runs the action if the first call never learned of its claim, and replays the
   * result if it stored one; a retry while an earlier call of the request runs the action (an
   * upstream timeout) is told {@link RunOnceResult.InProgress}, and the action runs once.
   *
   * @param key 1 to {@value #MAX_KEY_LENGTH} characters, no control characters
   * @param requestId 1 to {@value Tokens#MAX_REQUEST_ID_LENGTH} characters, no control characters;
   *     the same on every retry of one request, never shared between requests
   * @throws IdempotentActionException wrapping a checked exception of the action (unchecked ones
   *     are rethrown as they are); the record is marked failed either way
   * @throws IdempotencyStoreException if the store failed; retry with the same request id
   */
  public <T> RunOnceResult<T> runOnce(
      String key, String requestId, ResultCodec<T> codec, IdempotentAction<T> action) {
    return run(key, ClaimOwner.newAttempt(Tokens.requestIdHash(requestId)), codec, action);
  }

  /**
   * Runs {@code action} if no caller has run it for {@code key} (or only failed or crashed), stores
   * its result through {@code codec}, and returns it; otherwise returns the stored result or says
   * the action is in progress elsewhere.
   *
   * @param key 1 to {@value #MAX_KEY_LENGTH} characters, no control characters
   * @throws IdempotentActionException wrapping a checked exception of the action (unchecked ones
   *     are rethrown as they are); the record is marked failed either way
   * @throws IdempotencyStoreException if the store failed
   */
  public <T> RunOnceResult<T> runOnce(
      String key, ResultCodec<T> codec, IdempotentAction<T> action) {
    return run(key, ClaimOwner.single(Tokens.newToken()), codec, action);
  }

  private <T> RunOnceResult<T> run(
      String key, ClaimOwner owner, ResultCodec<T> codec, IdempotentAction<T> action) {
    Objects.requireNonNull(codec, "codec");
    Objects.requireNonNull(action, "action");
    ClaimOutcome outcome = claimAs(key, "", owner);
    if (outcome instanceof ClaimOutcome.Completed completed) {
      return new RunOnceResult.Replayed<>(codec.decode(completed.result()));
    }
    if (outcome instanceof ClaimOutcome.InProgress inProgress) {
      return new RunOnceResult.InProgress<>(inProgress.retryAfter());
    }
    if (!(outcome instanceof ClaimOutcome.Claimed claimed)) {
      throw new IllegalStateException("Unexpected claim outcome " + outcome);
    }
    try (DedupClaim claim = claimed.claim()) {
      T result;
      byte[] encoded;
      try {
        result = action.run();
        encoded = codec.encode(result);
      } catch (RuntimeException | Error e) {
        claim.fail();
        throw e;
      } catch (Exception e) {
        claim.fail();
        if (e instanceof InterruptedException) {
          Thread.currentThread().interrupt();
        }
        throw new IdempotentActionException("The action for " + key + " failed: " + e, e);
      }
      // The action has run: a completion whose answer was lost is repeated (a repeat of one that
      // did happen answers true), since a claim left to close() would be failed and the retry
      // would run the action again.
      repeated(() -> claim.complete(encoded));
      return new RunOnceResult.Executed<>(result);
    }
  }

  /**
   * The primitive under {@link #runOnce}: claims {@code key} for a request with this fingerprint.
   * The caller that gets {@link ClaimOutcome.Claimed} does the work and completes or fails the
   * claim; a record made for another fingerprint gives {@link ClaimOutcome.FingerprintMismatch}.
   *
   * @param key 1 to {@value #MAX_KEY_LENGTH} characters, no control characters
   * @param fingerprint 0 to {@value #MAX_FINGERPRINT_LENGTH} characters (a hash of the request;
   *     empty when unused)
   * @throws IdempotencyStoreException if the store failed
   */
  public ClaimOutcome claim(String key, String fingerprint) {
    return claimAs(key, fingerprint, ClaimOwner.single(Tokens.newToken()));
  }

  /**
   * {@link #claim(String, String)} for the request {@code requestId}: if this request claimed the
   * key before and that claim's answer was lost, the answer is {@link ClaimOutcome.Claimed} again
   * (the in-progress timeout starts again), with a handle that completes or fails that claim; if it
   * completed the key, {@link ClaimOutcome.Completed}. If an earlier call of this request was
   * answered {@link ClaimOutcome.Claimed} and has not finished, {@link ClaimOutcome.InProgress}, as
   * for another request id.
   *
   * @param key 1 to {@value #MAX_KEY_LENGTH} characters, no control characters
   * @param fingerprint 0 to {@value #MAX_FINGERPRINT_LENGTH} characters (a hash of the request;
   *     empty when unused)
   * @param requestId 1 to {@value Tokens#MAX_REQUEST_ID_LENGTH} characters, no control characters;
   *     the same on every retry of one request, never shared between requests
   * @throws IdempotencyStoreException if the store failed; retry with the same request id
   */
  public ClaimOutcome claim(String key, String fingerprint, String requestId) {
    return claimAs(key, fingerprint, ClaimOwner.newAttempt(Tokens.requestIdHash(requestId)));
  }

  private ClaimOutcome claimAs(String key, String fingerprint, ClaimOwner owner) {
    checkKey(key);
    Objects.requireNonNull(fingerprint, "fingerprint");
    if (fingerprint.length() > MAX_FINGERPRINT_LENGTH) {
      throw new IllegalArgumentException(
          "fingerprint must have 0 to "
              + MAX_FINGERPRINT_LENGTH
              + " characters, but has "
              + fingerprint.length());
    }
    ClaimAttempt attempt = store.tryClaim(key, fingerprint, owner.toString(), inProgressTimeout);
    switch (attempt.kind()) {
      case CLAIMED:
        if (owner.needsConfirmation()) {
          ClaimAttempt confirmed = confirm(key, fingerprint, owner);
          if (confirmed.kind() != ClaimAttempt.Kind.CLAIMED) {
            // Another attempt of this request took the claim over (this one's answer was taken
            // for lost): that attempt does the work.
            return new ClaimOutcome.InProgress(confirmed.remaining());
          }
        }
        return new ClaimOutcome.Claimed(
            new DedupClaim(store, key, owner.toString(), retention, failedRetention));
      case IN_PROGRESS:
        return new ClaimOutcome.InProgress(attempt.remaining());
      case COMPLETED:
        return new ClaimOutcome.Completed(Objects.requireNonNull(attempt.result()));
      case FINGERPRINT_MISMATCH:
        return new ClaimOutcome.FingerprintMismatch();
      default:
        throw new IllegalStateException("Unknown claim kind " + attempt.kind());
    }
  }

  /**
   * Confirms this attempt's claim before anyone is told of it: from then on a repeat of the request
   * is in progress, not a second owner. A claim taken over by another attempt meanwhile is not
   * confirmed (not {@code CLAIMED}).
   *
   * <p>A confirmation whose answer is lost is repeated by this same attempt (a confirmation is a
   * compare-and-set on key, request and attempt: a repeat of one that did happen answers {@code
   * CLAIMED} again, and it can never confirm another attempt's claim), a few times within {@link
   * #REPEAT_PAUSES_MILLIS}: the connection that lost the answer is usually back within milliseconds
   * (Lettuce reconnects on its next timer tick, about 100 ms), and without the repeat the call
   * would fail and its own retry find the claim confirmed, {@code InProgress} until the timeout.
   * Only when every repeat failed does the call throw, and the work does not run; the claim is then
   * given back (failed, checked against the attempt, repeated the same way), so that a retry claims
   * the key again at once. If the give-back fails too, the key stays in progress until its timeout:
   * late, never twice (no other attempt can tell a confirmed claim whose attempt gave up from one
   * whose attempt is running).
   */
  private ClaimAttempt confirm(String key, String fingerprint, ClaimOwner owner) {
    try {
      return repeated(() -> store.confirm(key, fingerprint, owner.toString(), inProgressTimeout));
    } catch (RuntimeException e) {
      try {
        repeated(() -> store.fail(key, owner.toString(), failedRetention));
      } catch (RuntimeException failed) {
        e.addSuppressed(failed);
      }
      throw e;
    }
  }

  /**
   * Runs {@code call}, a store call that is safe to repeat, and repeats it after a pause while it
   * fails with {@link IdempotencyStoreException} (its answer was lost, or the store could not be
   * reached), up to {@link #STORE_CALL_TRIES} tries, none started later than {@link #REPEAT_WINDOW}
   * after the first failure. Any other exception is not a store failure and is thrown at once. An
   * interrupt ends the repeats (the flag stays set).
   *
   * @throws IdempotencyStoreException the first failure, the later ones suppressed in it
   */
  private static <T> T repeated(Supplier<T> call) {
    IdempotencyStoreException failure = null;
    long firstFailure = 0;
    for (int repeat = 0; ; repeat++) {
      try {
        return call.get();
      } catch (IdempotencyStoreException e) {
        if (failure == null) {
          failure = e;
          firstFailure = System.nanoTime();
        } else {
          failure.addSuppressed(e);
        }
        if (repeat == REPEAT_PAUSES_MILLIS.length) {
          throw failure;
        }
        long pause = REPEAT_PAUSES_MILLIS[repeat];
        long nextTry = System.nanoTime() - firstFailure + TimeUnit.MILLISECONDS.toNanos(pause);
        if (nextTry > REPEAT_WINDOW.toNanos() || !pause(pause)) {
          throw failure;
        }
      }
    }
  }

  /** Waits before a repeat; false if interrupted (the flag is set again). */
  private static boolean pause(long millis) {
    try {
      Thread.sleep(millis); // a backoff before a repeat, not a synchronization
      return true;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /**
   * Checks a dedup key.
   *
   * @throws IllegalArgumentException if it is empty, longer than {@value #MAX_KEY_LENGTH}
   *     characters or has control characters
   */
  public static String checkKey(String key) {
    Objects.requireNonNull(key, "key");
    if (key.isEmpty() || key.length() > MAX_KEY_LENGTH) {
      throw new IllegalArgumentException(
          "key must have 1 to " + MAX_KEY_LENGTH + " characters, but has " + key.length());
    }
    if (key.chars().anyMatch(Character::isISOControl)) {
      throw new IllegalArgumentException("key must not contain control characters");
    }
    return key;
  }
}
