package io.dlock.bench;

import java.net.InetSocketAddress;
import java.time.Duration;

/**
 * One system's leased semaphore in the killed-holder measure: it makes participants whose clients
 * reach its server at an address the benchmark gives them (a proxy of each participant's own, which
 * the benchmark closes to kill the holder as a crashed process looks to the server).
 */
interface SemaphoreContender {

  /** The row's name in the report. */
  String name();

  /** The settings that bound the time until a dead holder's permits come back, for the report. */
  String bound();

  /** The server its participants talk to (each through its own proxy). */
  InetSocketAddress server();

  /**
   * A participant of the semaphore {@code semaphore}, bounded to one permit, in a client of its own
   * that connects to {@code address} ({@code host:port}).
   */
  Participant participant(String semaphore, String address) throws Exception;

  /** One participant and its client: a process of its own, as far as the server can tell. */
  interface Participant extends AutoCloseable {

    /** Takes the permit, waiting up to {@code wait}; false if it did not come free in time. */
    boolean acquire(Duration wait) throws Exception;

    /** Gives the permit back if held (best effort) and closes the client. */
    @Override
    void close();
  }
}
