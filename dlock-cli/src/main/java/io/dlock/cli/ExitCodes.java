package io.dlock.cli;

/**
 * The exit statuses of {@code dlock}, from sysexits.h where one fits. {@code dlock run} otherwise
 * exits with its command's status, so a command that itself exits with one of these numbers is
 * indistinguishable from dlock's own (as with flock(1)).
 */
final class ExitCodes {
  /** Success. */
  static final int OK = 0;

  /** {@code release --force}: nothing was released (not held, or not confirmed). */
  static final int NOTHING_DONE = 1;

  /**
   * Bad input: an unknown option or {@code --config} key, a malformed URI, duration or setting
   * (EX_USAGE). Whatever the user typed or wrote in the file: fixed by changing the invocation.
   */
  static final int USAGE = 64;

  /**
   * The backend cannot be reached (or did not answer within {@code run --wait}), or cannot do what
   * was asked (EX_UNAVAILABLE).
   */
  static final int UNAVAILABLE = 69;

  /** An internal error (EX_SOFTWARE). */
  static final int SOFTWARE = 70;

  /** {@code run}: the lock was not acquired within {@code --wait} (EX_TEMPFAIL). */
  static final int NOT_ACQUIRED = 75;

  /**
   * {@code run}: the lease was lost while the command ran, and the command was stopped; or the
   * release found it lost after the command ended (the command ran without the lock for a time).
   */
  static final int LEASE_LOST = 76;

  /**
   * The backend is reachable but not set up for dlock: a JDBC lock table missing or unusable
   * (EX_CONFIG). Fixed on the server (or by letting dlock create the schema), not on the command
   * line.
   */
  static final int CONFIG = 78;

  /** {@code run}: the command could not be started (as shells report it). */
  static final int COMMAND_NOT_FOUND = 127;

  /**
   * {@code run}: dlock itself was interrupted (a thread that ran it in process), and the command
   * was stopped and the lock released; the status a shell gives a command ended by Ctrl-C.
   */
  static final int INTERRUPTED = 130;

  private ExitCodes() {}
}
