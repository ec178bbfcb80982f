package io.dlock.idempotency;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A store decorator that forwards the three primitives only, as an application's decorator
 * (metrics, fault injection) written against them would (confirmations reach it as claims); the
 * tests override one to step between a store call and its answer. {@link #loseNextClaimReply()}
 * makes the next claim reach the store and its answer be lost, {@link #loseNextConfirmationReply()}
 * the next confirmation.
 */
class ForwardingDedupStore implements DedupStore {
  private final DedupStore delegate;
  private final AtomicBoolean loseNextClaimReply = new AtomicBoolean();
  private final AtomicBoolean loseNextConfirmationReply = new AtomicBoolean();

  ForwardingDedupStore(DedupStore delegate) {
    this.delegate = delegate;
  }

  /**
   * The next claim is made on the store, but its caller gets an exception instead of the answer.
   */
  ForwardingDedupStore loseNextClaimReply() {
    loseNextClaimReply.set(true);
    return this;
  }

  /** The next confirmation is made on the store, but its caller gets an exception. */
  ForwardingDedupStore loseNextConfirmationReply() {
    loseNextConfirmationReply.set(true);
    return this;
  }

  @Override
  public ClaimAttempt tryClaim(
      String key, String fingerprint, String owner, Duration inProgressTimeout) {
    ClaimAttempt attempt = delegate.tryClaim(key, fingerprint, owner, inProgressTimeout);
    boolean confirmation = ClaimOwner.parse(owner).confirmation();
    if ((confirmation ? loseNextConfirmationReply : loseNextClaimReply)
        .compareAndSet(true, false)) {
      throw new IdempotencyStoreException(
          "test: the answer of the " + (confirmation ? "confirmation" : "claim") + " was lost",
          null);
    }
    return attempt;
  }

  @Override
  public boolean complete(String key, String owner, byte[] result, Duration retention) {
    return delegate.complete(key, owner, result, retention);
  }

  @Override
  public boolean fail(String key, String owner, Duration retention) {
    return delegate.fail(key, owner, retention);
  }
}
