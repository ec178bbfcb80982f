package io.dlock.core;

import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The timing of one grant's lease as the client sees it: until when it is trusted, when it is due
 * for renewal, the length asked of the server now, and the cap on the length trusted. It changes
 * only when the server has answered (or failed to answer) a request that set the lease, counted
 * from the instant the request was sent.
 *
 * <p>A superclass of {@link Grant} (under {@link GrantValidity}, {@link GrantHolds} and {@link
 * GrantLoss}), not a field of it: a client may hold a hundred thousand grants, and a second object
 * each would cost its header. Its updates synchronize on the grant's monitor, as the grant's own
 * do, and never cover I/O.
 */
abstract class LeaseTerm {
  private volatile long validUntilNanos;
  private volatile long nextRenewalNanos;

  /**
   * Null until the holder {@linkplain io.dlock.Lease#extend extends} the lease or a request's
   * answer never comes; then the lease length now asked for and the longest length the client may
   * trust. One reference rather than two longs: most grants never need it.
   */
  private volatile @Nullable LeaseLength length;

  /**
   * A lease length after an extension, and a cap on the length the client trusts: a renewal or
   * extension whose answer never came may still reach the server later and set the lease to its
   * length then, so a later, longer lease is trusted only for the shortest such length (for the
   * rest of the grant).
   */
  private record LeaseLength(long leaseNanos, long trustCapNanos) {}

  /** The lease of the grant's options: what acquisitions ask for. */
  abstract Duration optionsLeaseTime();

  /** Now, on the client's monotonic clock. */
  abstract long nowNanos();

  private long optionsLeaseNanos() {
    return optionsLeaseTime().toNanos();
  }

  /**
   * Whether holds of other clients and threads share the server's lock (an owner id): their
   * renewals and re-entries ask for the options' length, whatever this grant was extended to.
   */
  abstract boolean sharedByOtherHolders();

  long validUntilNanos() {
    return validUntilNanos;
  }

  long nextRenewalNanos() {
    return nextRenewalNanos;
  }

  /** The lease length asked for now: the options', or the last extension's. */
  long leaseNanos() {
    LeaseLength l = length;
    return l == null ? optionsLeaseNanos() : l.leaseNanos();
  }

  /** The lease length asked for now, as a duration (for requests and messages). */
  Duration leaseTime() {
    LeaseLength l = length;
    return l == null ? optionsLeaseTime() : Duration.ofNanos(l.leaseNanos());
  }

  /** The length the client trusts of the lease asked for now. */
  long trustedLeaseNanos() {
    return trustedNanos(leaseNanos());
  }

  /** The length the client trusts of a lease of {@code sentNanos}: see {@link LeaseLength}. */
  private long trustedNanos(long sentNanos) {
    LeaseLength l = length;
    return l == null ? sentNanos : Math.min(sentNanos, l.trustCapNanos());
  }

  /**
   * How much earlier than the lease's nominal end the client stops trusting it: 1% of the lease for
   * clock-rate drift between client and server (as Redlock assumes), plus 2 ms for the server's
   * millisecond expiry resolution.
   */
  static long safetyMarginNanos(long leaseNanos) {
    return leaseNanos / 100 + 2_000_000L;
  }

  /**
   * The backend set the lease to {@code sentNanos} for a request sent at {@code sentAtNanos}: the
   * server set its expiry after that instant, so counting from the send time errs on the safe side.
   * Renewals and extensions of one grant never overlap (both run on the renewal thread), so the
   * last one confirmed is the one the server applied last.
   */
  boolean renewed(long sentAtNanos, long sentNanos) {
    synchronized (this) { // against confirmedCountedHold on a caller's thread
      if (validUntilNanos - nowNanos() <= 0) {
        return false; // ran out before this answer: lost for good (the caller marks it so)
      }
      granted(sentAtNanos, sentNanos);
      return true;
    }
  }

  /** The grant's first lease: {@code sentNanos} for the acquisition sent at {@code sentAtNanos}. */
  final void granted(long sentAtNanos, long sentNanos) {
    synchronized (this) {
      long trusted = trustedNanos(sentNanos);
      validUntilNanos = sentAtNanos + trusted - safetyMarginNanos(trusted);
      nextRenewalNanos = sentAtNanos + trusted / 3;
    }
  }

  /**
   * An owner-id re-entry sent at {@code sentAtNanos} was granted: the server extended the lease by
   * the options' length, never shortening it, so the trusted end can only move later.
   */
  void confirmedCountedHold(long sentAtNanos) {
    synchronized (this) {
      if (validUntilNanos - nowNanos() <= 0) {
        return; // ran out before this answer: lost for good, as renewed() keeps it
      }
      long trusted = trustedNanos(optionsLeaseNanos());
      long end = sentAtNanos + trusted - safetyMarginNanos(trusted);
      if (end - validUntilNanos > 0) {
        validUntilNanos = end;
      }
    }
  }

  /**
   * An extension to {@code leaseNanos} was confirmed: later renewals ask for that length.
   *
   * <p>With an owner id, holds of other clients and threads share the server's lock: another hold's
   * renewal or re-entry asks for the options' length and may land after this extension (setting
   * that length), and a re-entry racing a shorter extension may land before it. So such a grant is
   * trusted for no longer than the shorter of the options' length and this one.
   */
  boolean extended(long sentAtNanos, long leaseNanos) {
    synchronized (this) {
      if (validUntilNanos - nowNanos() <= 0) {
        return false; // ran out before this answer, as renewed() refuses
      }
      LeaseLength l = length;
      long cap = l == null ? Long.MAX_VALUE : l.trustCapNanos();
      if (sharedByOtherHolders()) {
        cap = Math.min(cap, Math.min(optionsLeaseNanos(), leaseNanos));
      }
      length = new LeaseLength(leaseNanos, cap);
      granted(sentAtNanos, leaseNanos);
      return true;
    }
  }

  /**
   * A request to set the lease to {@code sentNanos}, sent at {@code sentAtNanos}, got no answer: it
   * may have been applied, or may be applied later. From now on the client trusts no lease longer
   * than that, and not this one past its end should it have shortened it.
   */
  void unanswered(long sentAtNanos, long sentNanos) {
    synchronized (this) {
      LeaseLength l = length;
      long asked = l == null ? optionsLeaseNanos() : l.leaseNanos();
      long cap = l == null ? sentNanos : Math.min(l.trustCapNanos(), sentNanos);
      length = new LeaseLength(asked, cap);
      long end = sentAtNanos + sentNanos - safetyMarginNanos(sentNanos);
      if (end - validUntilNanos < 0) {
        validUntilNanos = end;
      }
      long renewBy = sentAtNanos + cap / 3;
      if (renewBy - nextRenewalNanos < 0) {
        nextRenewalNanos = renewBy;
      }
    }
  }

  /**
   * A renewal of {@code sentNanos} sent at {@code sentAtNanos} did not get through; try again soon,
   * well before the lease runs out.
   */
  void renewalFailed(long sentAtNanos, long sentNanos, long nowNanos) {
    synchronized (this) {
      // It may still land later (a pooled connection, a resent script, a slow Redlock master),
      // and set its length then: whatever the grant is extended to later is capped by it.
      unanswered(sentAtNanos, sentNanos);
      // Before the trusted end, where the next tick marks the lease lost instead, if it can be;
      // but at least 10 ms on: a backend that fails at once is never asked in a loop (review).
      long gap = retryGapNanos(trustedLeaseNanos());
      nextRenewalNanos =
          Math.max(
              nowNanos + MIN_RETRY_GAP_NANOS, Math.min(nowNanos + gap, validUntilNanos - gap / 2));
    }
  }

  /**
   * How long after a failed renewal the next is tried: a tenth of the trusted lease, at least 10 ms
   * (a backend that fails at once is not asked in a loop).
   */
  static long retryGapNanos(long trustedNanos) {
    return Math.max(trustedNanos / 10, MIN_RETRY_GAP_NANOS);
  }

  private static final long MIN_RETRY_GAP_NANOS = 10_000_000L;
}
