package io.dlock.idempotency;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A store decorator that forwards the three primitives only, as an application's decorator
 * (metrics, fault injection) written against them would (confirmations reach it as claims); the
 * tests override one to step between a store call and its answer. {@link #loseNextClaimReply()}
 * makes the next claim reach the store and its answer be lost, {@link #loseConfirmationReplies} the
 * next confirmations', and {@link #refuseFails} keeps the next failures (a give-back) from reaching
 * the store at all ({@link #refuseCompletions} the next completions). It counts the confirmations
 * that reached the store and the failures sent.
 */
class ForwardingDedupStore implements DedupStore {
  private final DedupStore delegate;
  private final AtomicInteger claimRepliesToLose = new AtomicInteger();
  private final AtomicInteger confirmationRepliesToLose = new AtomicInteger();
  private final AtomicInteger failsToRefuse = new AtomicInteger();
  private final AtomicInteger completionsToRefuse = new AtomicInteger();
  private final AtomicInteger confirmations = new AtomicInteger();
  private final AtomicInteger failures = new AtomicInteger();

  ForwardingDedupStore(DedupStore delegate) {
    this.delegate = delegate;
  }

  /**
   * The next claim is made on the store, but its caller gets an exception instead of the answer.
   */
  ForwardingDedupStore loseNextClaimReply() {
    claimRepliesToLose.set(1);
    return this;
  }

  /** The next confirmation is made on the store, but its caller gets an exception. */
  ForwardingDedupStore loseNextConfirmationReply() {
    return loseConfirmationReplies(1);
  }

  /**
   * The next {@code count} confirmations are made on the store, but their callers get exceptions.
   */
  ForwardingDedupStore loseConfirmationReplies(int count) {
    confirmationRepliesToLose.set(count);
    return this;
  }

  /**
   * The next {@code count} failures (give-backs) never reach the store, and their callers get
   * exceptions: a client library that rejects commands while it reconnects after a reset.
   */
  ForwardingDedupStore refuseFails(int count) {
    failsToRefuse.set(count);
    return this;
  }

  /** The next {@code count} completions never reach the store, and their callers get exceptions. */
  ForwardingDedupStore refuseCompletions(int count) {
    completionsToRefuse.set(count);
    return this;
  }

  /** How many confirmations reached the store. */
  int confirmations() {
    return confirmations.get();
  }

  /** How many failures (give-backs) were sent, refused or not. */
  int failures() {
    return failures.get();
  }

  @Override
  public ClaimAttempt tryClaim(
      String key, String fingerprint, String owner, Duration inProgressTimeout) {
    ClaimAttempt attempt = delegate.tryClaim(key, fingerprint, owner, inProgressTimeout);
    boolean confirmation = ClaimOwner.parse(owner).confirmation();
    if (confirmation) {
      confirmations.incrementAndGet();
    }
    if (lose(confirmation ? confirmationRepliesToLose : claimRepliesToLose)) {
      throw new IdempotencyStoreException(
          "test: the answer of the " + (confirmation ? "confirmation" : "claim") + " was lost",
          null);
    }
    return attempt;
  }

  @Override
  public boolean complete(String key, String owner, byte[] result, Duration retention) {
    if (lose(completionsToRefuse)) {
      throw new IdempotencyStoreException("test: the completion could not be sent", null);
    }
    return delegate.complete(key, owner, result, retention);
  }

  @Override
  public boolean fail(String key, String owner, Duration retention) {
    failures.incrementAndGet();
    if (lose(failsToRefuse)) {
      throw new IdempotencyStoreException("test: the failure could not be sent", null);
    }
    return delegate.fail(key, owner, retention);
  }

  /** Whether to lose this answer: counts one of the answers still to lose down. */
  private static boolean lose(AtomicInteger toLose) {
    return toLose.getAndUpdate(n -> Math.max(0, n - 1)) > 0;
  }
}
