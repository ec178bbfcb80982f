package io.dlock.bench;

import java.net.InetSocketAddress;

/**
 * One system's leader election in the election comparison: it makes candidates whose clients reach
 * its server at an address the benchmark gives them (a proxy of each candidate's own, which the
 * benchmark closes to kill that candidate as a crashed process looks to the server).
 */
interface ElectionContender {

  /** The row's name in the report. */
  String name();

  /** The settings that bound its time to a new leader after a crash, for the report. */
  String bound();

  /** The server its candidates talk to (each through its own proxy). */
  InetSocketAddress server();

  /**
   * A candidate of the election {@code election}, in a client of its own that connects to {@code
   * address} ({@code host:port}); it competes once {@link Candidate#join() joined}.
   *
   * @param elected run each time this candidate is told it leads, on the thread that tells it
   */
  Candidate candidate(String election, String address, Runnable elected) throws Exception;

  /** One candidate and its client: a process of its own, as far as the server can tell. */
  interface Candidate extends AutoCloseable {

    /** Starts competing. */
    void join() throws Exception;

    /** Gives leadership up the normal way (a release, no crash) and competes no more. */
    void stepDown() throws Exception;

    /** Closes the candidacy and its client. */
    @Override
    void close();
  }
}
