package io.dlock.spi;

/**
 * An optional ability: the backend's holds live and die with a session or connection (ZooKeeper,
 * database session and row locks), and it tells the core when that session is suspended, restored
 * or lost, or when one hold dies on its own.
 */
public interface SessionBoundHolds {

  /**
   * Called once by the core, before any acquisition, with the sink for session events. The sink's
   * methods never block and may be called from any thread.
   */
  void bindEvents(BackendEvents events);
}
