package io.dlock.zookeeper;

import io.dlock.spi.LeaseEndTimer;
import org.apache.zookeeper.data.Stat;
import org.jspecify.annotations.Nullable;

/**
 * What this backend knows of one owner's queue node for one lock. Fields are changed by that
 * owner's calls, which run one at a time per key; the watcher, the lease timer and renewal read the
 * volatile ones.
 */
final class QueueEntry {
  volatile @Nullable String node;

  /** The session that owns {@link #node} (its ephemeral owner), 0 while unknown. */
  volatile long nodeSession;

  /**
   * Dropped from the entries (its session ended, or it was released or abandoned): a node created
   * for it afterwards is tracked by nobody. Set by {@link #detach}, read by {@link #track} and
   * {@link #adopt}, under this entry's monitor.
   */
  private boolean removed;

  long czxid;
  int version;
  int holdCount;

  /** The node's data after the hold count: grant time and holder description. */
  String description = "";

  /** A create was sent whose answer was lost: a node of ours may exist unknown to us. */
  volatile boolean uncertain;

  /** The queue as requested when the predecessor's watch fired, for the next attempt. */
  volatile @Nullable PrefetchedListing prefetch;

  /** Grants made through this backend and not yet released. */
  volatile int localHolds;

  /**
   * The end of the lease kept by this backend, on the client's clock. It starts at the entry's
   * creation, never at 0: a client clock may read negative (an offset clock on a young host), and
   * extensions only move it forward.
   */
  volatile long leaseEndNanos;

  /** The lock and owner of this entry. */
  final LockAndOwner key;

  QueueEntry(LockAndOwner key, long createdNanos) {
    this.key = key;
    this.leaseEndNanos = createdNanos;
  }

  /**
   * Moves the end of the lease kept by this backend to {@code until} (never back), and registers it
   * with the lease timer unless it is registered: a registration that comes due finds the later end
   * and registers again (see QueueLeases#leaseEnded). When it passes without another extension, the
   * holder's node is deleted.
   */
  void extendLease(LeaseEndTimer<QueueEntry> timer, long until) {
    if (until - leaseEndNanos > 0) {
      leaseEndNanos = until;
    }
    if (!timer.isRegistered(this)) {
      timer.register(this, leaseEndNanos);
    }
  }

  /** The watch on the predecessor set last, fired or not; null if none. */
  volatile @Nullable PredecessorWatch watch;

  /** The watch on a node of this owner id that another session created (see JoinedHolds#join). */
  volatile @Nullable SharedNodeWatch sharedWatch;

  /**
   * This client is deleting the node (its last hold): its deletion is then no loss to report. Set
   * before the delete is sent, because ZooKeeper tells the watch before it answers the delete.
   */
  volatile boolean deleting;

  /**
   * Whether {@link #node} is the grant with this fencing token (its {@code czxid}). One owner id
   * can be granted a lock again after its earlier grant ended behind its holders' backs; the node
   * then changes, and so does the token, while the owner stays the same.
   */
  boolean isGrant(long fencingToken) {
    return czxid == fencingToken;
  }

  /*
   * Why a monitor: an owner's calls run one at a time per key, but the session-loss handling
   * (on Curator's connection-state thread) detaches every entry at any moment. Checking that
   * the entry is still attached and recording a new node must be one step against it, or a
   * node recorded just after the session loss looked at the entry is tracked by nobody and
   * blocks the lock for as long as its session lives. Only fields change under the monitor; the
   * requests (deleting a node) are made by the callers, outside it.
   */

  /**
   * Records the node a create just made (hold count 1), unless the entry was detached.
   *
   * @return false if detached: the caller must delete {@code path}, which nobody else will
   */
  synchronized boolean track(String path, Stat stat, String description) {
    if (removed) {
      return false;
    }
    node = path;
    nodeSession = stat.getEphemeralOwner();
    czxid = stat.getCzxid();
    version = stat.getVersion();
    holdCount = 1;
    this.description = description;
    uncertain = false;
    return true;
  }

  /**
   * Records a node of this owner found after a create whose answer was lost; its data is read
   * before it is changed ({@code version} -1).
   *
   * @return false if detached: the caller must delete {@code path}
   */
  synchronized boolean adopt(String path, Stat stat) {
    if (removed) {
      return false;
    }
    node = path;
    nodeSession = stat.getEphemeralOwner();
    czxid = stat.getCzxid();
    version = -1;
    holdCount = 1;
    return true;
  }

  /**
   * Records the node of another client of the same owner id, after a write that counted this
   * client's hold on it succeeded ({@code written} is that write's answer), unless the entry was
   * detached.
   *
   * @return false if detached: the caller must take its hold back
   */
  synchronized boolean join(String path, Stat written, int holds, String description) {
    if (removed) {
      return false;
    }
    node = path;
    nodeSession = written.getEphemeralOwner();
    czxid = written.getCzxid();
    version = written.getVersion();
    holdCount = holds;
    this.description = description;
    prefetch = null;
    return true;
  }

  /**
   * Detaches the entry: nothing is tracked in it from now on.
   *
   * @param currentSession the session now current, or 0
   * @return the node tracked, if it belongs to {@code currentSession} (alive, and for the caller to
   *     delete), else null
   */
  synchronized @Nullable String detach(long currentSession) {
    removed = true;
    String tracked = node;
    return tracked != null && currentSession != 0 && nodeSession == currentSession ? tracked : null;
  }

  void forgetNode() {
    deleting = false;
    node = null;
    nodeSession = 0;
    prefetch = null;
    localHolds = 0;
    watch = null;
  }
}
