package io.dlock;

import java.time.Duration;
import java.util.function.Consumer;

/**
 * One acquisition of a lock: the handle its holder keeps while it works, and closes (directly or by
 * try-with-resources) to release it.
 *
 * <p>Several leases may share one grant (reentrancy); they then share the fencing token and the
 * validity. The grant is released on the server when its last lease is released.
 */
public interface Lease extends AutoCloseable {

  /** The name of the lock this lease holds. */
  String lockName();

  /**
   * The fencing token of this grant: strictly greater than the token of every earlier grant of the
   * same lock name, also after the lock expired or was deleted. Pass it to the protected resource
   * so that it can reject a write from a holder whose lease was lost.
   */
  long fencingToken();

  /**
   * Whether the lease is still valid as far as this client knows: granted, not released, not
   * reported lost, and not past the end of its lease as measured on the monotonic clock from the
   * moment the last grant or renewal request was sent.
   */
  boolean isValid();

  /** The state of this lease. */
  LeaseState state();

  /**
   * How long the lease is known to last without a further renewal, measured on the monotonic clock;
   * zero once it is not valid.
   */
  Duration remaining();

  /**
   * Throws if the lease is not valid. Call before each write the lock protects.
   *
   * @throws LockLostException if the lease was lost or has run out
   * @throws IllegalStateException if this lease was already released
   */
  void ensureValid();

  /**
   * Registers a listener told, exactly once, when the grant is lost: its renewal found the lock
   * gone or owned by someone else, or renewal failed until the lease ran out. A listener added
   * after the loss is told at once. Listeners run on the client's event thread, never on the
   * caller's, and should not block. A lease released by its holder is not lost: its listeners never
   * fire.
   */
  void onLost(Consumer<LeaseLostEvent> listener);

  /**
   * Sets the lease of this grant to {@code lease} from now, on the server, and only if this owner
   * still holds the grant there (owner and fencing token checked atomically, as a renewal is). A
   * renewed lease is renewed with that length from then on; a fixed lease simply ends later (or
   * sooner): ShedLock's {@code extend}. Every hold of the grant shares the new lease. Blocks for
   * one round trip after any renewal under way: at most twice the client's operation timeout to get
   * its turn (else it is withdrawn unsent and reported), then at most the operation timeout.
   *
   * <p>What the client trusts: a grant of an {@linkplain LockOptions#withOwnerId owner id} is
   * trusted for no longer than its options' lease, however far it is extended (other holders of the
   * id renew it with that length); and after a renewal or extension whose answer never came, no
   * longer than that request's length. On session-bound backends (ZooKeeper, database session and
   * row locks) the lease is the client's own timer, which an extension moves later but never
   * earlier: a shorter lease ends the holder's trust sooner, not the hold.
   *
   * @param lease from {@link LockOptions#MIN_LEASE} to {@link LockOptions#MAX_LEASE}
   * @throws IllegalArgumentException if {@code lease} is out of that range
   * @throws IllegalStateException if this lease (or every hold of its grant) was released
   * @throws LockLostException if the lease was lost before, or the server no longer holds this
   *     grant (the loss is then reported to the lost-lease listeners, as a renewal would)
   * @throws BackendUnavailableException if the server did not confirm in time; the request may
   *     still take effect, so the client trusts the lease no longer than the shorter of the old and
   *     the new length from now on
   */
  void extend(Duration lease);

  /**
   * Releases this acquisition. If it was the last hold of its grant, the lock is deleted on the
   * server, atomically, and only if this owner still holds it.
   *
   * @return true if this call released its hold; false if there was nothing to release: already
   *     released, or the lease was lost (the server's lock, if any, belongs to someone else and is
   *     left alone). A false return is logged.
   * @throws BackendUnavailableException if the backend did not confirm the release; the lock then
   *     expires on the server after its lease, and is no longer renewed
   */
  boolean release();

  /**
   * Lets go of this acquisition without releasing the lock: the server keeps the lock until its
   * lease ends, and this client neither renews, watches nor releases it any more (closing the
   * client leaves it too). The lease then reads as released, and the client's event listener hears
   * of it as a release. For a holder that must keep a lock past its own end: ShedLock's {@code
   * lockAtLeastFor} across a graceful shutdown. Shorten the lease first ({@link #extend}) to decide
   * when the lock frees. A second call, or a call after {@link #release()}, does nothing.
   *
   * <p>Where holds belong to a session (ZooKeeper; database session and row locks) the hold ends at
   * its lease's end or when the client closes, whichever comes first. Abandoning one of several
   * holds of a grant (a re-entry on the same thread) changes nothing for the others: the last of
   * them to be released frees the lock at once. With an owner id, the server keeps counting this
   * hold until the lease ends, and the lock stays held at least that long.
   */
  void abandon();

  /** Same as {@link #release()}, for try-with-resources. */
  @Override
  void close();
}
