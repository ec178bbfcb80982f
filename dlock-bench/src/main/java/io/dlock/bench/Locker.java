package io.dlock.bench;

import java.util.Set;

/** One contender: a lock implementation driven the same way by every scenario. */
interface Locker extends AutoCloseable {

  /** Commands a client sends as requests of its own (not run inside a script). */
  Set<String> SCRIPT_AND_PUBSUB =
      Set.of(
          "eval",
          "evalsha",
          "eval_ro",
          "evalsha_ro",
          "fcall",
          "subscribe",
          "unsubscribe",
          "psubscribe",
          "punsubscribe",
          "ssubscribe",
          "sunsubscribe",
          "ping");

  /** The label in the tables. */
  String name();

  /**
   * Acquires {@code key}, waiting as long as needed (at most a minute).
   *
   * @param thread the calling worker's index: it picks the client when the contender has several
   */
  Held acquire(int thread, String key) throws Exception;

  /**
   * Whether {@code command} (as named in INFO commandstats) is sent by this client as a request.
   */
  default boolean isRequest(String command) {
    return SCRIPT_AND_PUBSUB.contains(command);
  }

  /**
   * Whether a thread should rotate over several names instead of reusing one: ShedLock cannot take
   * a name again within the millisecond it released it, so both JDBC contenders rotate.
   */
  default boolean rotatesKeys() {
    return false;
  }

  @Override
  void close();

  /** A held lock. */
  interface Held {
    void release() throws Exception;
  }
}
