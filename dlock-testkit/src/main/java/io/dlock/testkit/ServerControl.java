package io.dlock.testkit;

/** Stops and starts the server under test; only for servers the test started itself. */
public interface ServerControl {
  /** Stops the server abruptly; clients lose their connections. */
  void stop();

  /** Starts the server again at the same address. */
  void start();
}
