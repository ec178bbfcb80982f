package io.dlock.core;

import io.dlock.LeaseLostEvent;
import io.dlock.LeaseState;
import io.dlock.spi.ReleaseResult;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * How a holder lets go of one hold ({@link LeaseHandle#release}, {@link LeaseHandle#abandon}): the
 * hold ends under the grant's monitor ({@link Grant#endHold}); the client's bookkeeping, the
 * server's release and the loss that release may find come after, outside it, since they may wait
 * for I/O.
 */
final class GrantRelease {
  /** Grant's logger, not this class's: these messages always were Grant's, as configs name them. */
  private static final Logger log = LoggerFactory.getLogger(Grant.class);

  private GrantRelease() {}

  /**
   * Lets go of one hold without a word to the server, which keeps it until the lease ends (see
   * {@link io.dlock.Lease#abandon}). The last hold takes the grant out of the client: never
   * renewed, watched or released again.
   */
  static void abandon(Grant grant, LeaseHandle handle) {
    int left = grant.endHold(handle).left();
    if (left == 0) {
      grant.client().forget(grant);
    }
  }

  /**
   * Releases one hold. The last hold of a valid grant deletes the lock on the server; with an owner
   * id, every hold is counted on the server and released there.
   */
  static boolean release(Grant grant, LeaseHandle handle) {
    CoreLockClient client = grant.client();
    if (grant.ranOutUnmarked()) {
      // The lease ran out before this release (a pause, a renewal that did not get through): it
      // is lost, whether or not the renewal tick got there first. Saying so now tells the holder
      // at once, and the release below only cleans up without waiting for the server.
      grant.markLost(
          grant.autoRenew() ? LeaseLostEvent.Reason.EXPIRED : LeaseLostEvent.Reason.LEASE_ENDED,
          "the lease of " + grant.leaseTime() + " ran out before its release");
    }
    // The listeners of a lease released as a whole are kept until the server answers: a release
    // that finds the grant already gone there (a session lost, the lease expired or taken over
    // while the release waited) is a loss, and they are told of it.
    GrantLoss.EndedHold ended = grant.endHold(handle);
    int left = ended.left();
    if (left == 0) {
      client.forget(grant);
    }
    if (ended.before() == LeaseState.LOST) {
      log.info(
          "Release of lock '{}' (fencing token {}) did nothing for its holder: the lease was"
              + " already lost",
          grant.lockName(),
          grant.fencingToken());
      if (left == 0 || grant.holdCountOnServer()) {
        // The server may still count this hold (a lease the client stopped trusting early, or an
        // owner id held on by another hold): drop it there too. Owner-checked, so it never
        // touches another holder's lock; best effort, since the lease is gone anyway.
        grant.cleanupSent(
            client.releaseQuietly(grant.lockName(), grant.owner(), grant.fencingToken()));
      }
      return false;
    }
    if (left > 0 && !grant.holdCountOnServer()) {
      return true;
    }
    ReleaseResult result =
        client.releaseOnBackend(
            grant.lockName(), grant.owner(), grant.fencingToken(), grant.options().leaseTime());
    switch (result) {
      case RELEASED:
        client.signalLocalWaiters(grant.lockName());
        if (left > 0) {
          // The server dropped its last hold while this client still has some: not ours any more.
          grant.markLost(
              LeaseLostEvent.Reason.TAKEN_OVER,
              "the server released the lock while " + left + " hold(s) remained open");
        }
        return true;
      case STILL_HELD:
        return true;
      case NOT_HELD:
      default:
        if (left == 0) {
          // The last hold's release found the grant gone: the holder worked without the lock.
          LeaseLostEvent event =
              new LeaseLostEvent(
                  grant.lockName(),
                  grant.fencingToken(),
                  LeaseLostEvent.Reason.TAKEN_OVER,
                  "the release found the grant already gone on the server");
          for (Consumer<LeaseLostEvent> listener : ended.releasedListeners()) {
            client.dispatch(listener, event);
          }
          client.reportLost(event);
        }
        if (left > 0) {
          // The server says this owner holds nothing: the holds still open share the lost grant.
          grant.markLost(
              LeaseLostEvent.Reason.TAKEN_OVER,
              "a release found the grant gone on the server while "
                  + left
                  + " hold(s) remained open");
        }
        log.warn(
            "Release of lock '{}' (fencing token {}) did nothing: this owner no longer held it"
                + " (its lease expired or it was taken over); the lock was left untouched",
            grant.lockName(),
            grant.fencingToken());
        return false;
    }
  }
}
