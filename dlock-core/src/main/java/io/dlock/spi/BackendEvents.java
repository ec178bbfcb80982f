package io.dlock.spi;

/**
 * What a backend tells the core about the connection or session that carries its leases, for
 * backends whose leases live and die with a session (ZooKeeper, database connections). The core
 * implements this and hands it to {@link SessionBoundHolds#bindEvents(BackendEvents)} once.
 */
public interface BackendEvents {

  /**
   * The lease of the owner with {@code ownerKey} ({@link LockOwner#key()}) on {@code lockName} is
   * gone (its node, row or connection died).
   */
  void leaseLost(String lockName, String ownerKey, String detail);

  /**
   * The backend cannot currently confirm any lease (connection suspended): leases turn {@link
   * io.dlock.LeaseState#UNCERTAIN} until {@link #connectionRestored()} or loss.
   */
  void connectionSuspended(String detail);

  /** The connection is back with the same session: uncertain leases are valid again. */
  void connectionRestored();

  /** The session is gone: every lease of this client is lost. */
  void sessionLost(String detail);
}
