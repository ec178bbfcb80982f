package io.dlock.cli;

/**
 * The backend answered but is not set up for dlock (a JDBC lock table missing or unusable): a
 * configuration problem, exit {@link ExitCodes#CONFIG}, whose message says how to fix it from the
 * command line.
 */
final class BackendNotSetUpException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  BackendNotSetUpException(String message, Throwable cause) {
    super(message, cause);
  }
}
