package io.dlock.cli;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Runs the {@code dlock} command line: in the test's own JVM ({@link InProcessCli}, cheap, for the
 * contract of every backend) or as separate OS processes from the packaged jar ({@link
 * CliProcesses}, for the few tests of what only a real process shows).
 */
interface Cli {

  /** The result of a finished run. */
  record Result(int exit, String out, String err, Duration took) {}

  /** A run started in the background. */
  interface Running {
    /** Waits at most {@code timeout} for the end of the run; whether it ended. */
    boolean waitFor(long timeout, TimeUnit unit) throws InterruptedException;

    /** The exit status of an ended run. */
    int exitValue();

    /** The process id the run's lock holder describes itself with. */
    long pid();

    /** Stops the run (SIGTERM for a process, an interrupt in process) and waits for its end. */
    void stop();
  }

  /** Runs {@code dlock args...} to its end (at most {@code timeout}). */
  Result run(Duration timeout, String... args);

  /** Runs {@code dlock args...} with {@code input} on its standard input. */
  Result runWithInput(String input, Duration timeout, String... args);

  /** Starts {@code dlock args...} without waiting; its output and errors go to the files. */
  Running start(Path outFile, Path errFile, String... args);
}
