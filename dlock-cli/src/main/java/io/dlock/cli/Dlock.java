package io.dlock.cli;

import io.dlock.BackendUnavailableException;
import io.dlock.LockClients;
import java.io.InputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.util.Arrays;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** The {@code dlock} command. */
@Command(
    name = "dlock",
    mixinStandardHelpOptions = true,
    version = "dlock 0.1.0",
    description =
        "Distributed locks from the shell: run a job on one machine at a time, see who"
            + " holds which lock, break a stuck lock, or watch the flash-sale demo.",
    subcommands = {
      RunCommand.class,
      StatusCommand.class,
      ReleaseCommand.class,
      DemoCommand.class,
      DemoBuyerCommand.class
    },
    exitCodeListHeading = "%nExit status:%n",
    exitCodeList = {
      "0:success; for run, the command's own status",
      "1:release --force released nothing",
      "64:bad command line or --config file (unknown option or key, malformed URI,"
          + " duration or setting)",
      "69:backend unreachable (for run: no answer within --wait), or it cannot do what was asked",
      "70:internal error",
      "75:run: lock not acquired (--elect: not elected) within --wait",
      "76:run: lease lost (--elect: the term ended) while the command ran (stopped), or found"
          + " lost at its release",
      "78:backend not set up for dlock (JDBC: lock table missing; see createSchema)",
      "127:run: the command could not be started",
      "130:run: dlock was interrupted; the command was stopped"
    })
public final class Dlock implements Runnable {

  @Spec CommandSpec spec;

  /** Where questions to the user are answered ({@code release --force} without {@code --yes}). */
  private InputStream in = System.in;

  InputStream in() {
    return in;
  }

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(), "a command is needed: run, status, release or demo");
  }

  public static void main(String[] args) {
    System.exit(execute(args));
  }

  /** Runs the command line on the process's streams and returns its exit status. */
  static int execute(String... args) {
    Charset charset = Charset.defaultCharset();
    return execute(
        System.in,
        new PrintWriter(new OutputStreamWriter(System.out, charset), true),
        new PrintWriter(new OutputStreamWriter(System.err, charset), true),
        args);
  }

  /**
   * Runs the command line on the given streams and returns its exit status; never calls
   * System.exit, so that it can run inside another JVM (the tests drive it so). A command that
   * {@code run} starts still writes to the process's own standard output and error.
   */
  static int execute(InputStream in, PrintWriter out, PrintWriter err, String... args) {
    boolean verbose =
        Arrays.asList(args).contains("-v") || Arrays.asList(args).contains("--verbose");
    Dlock dlock = new Dlock();
    dlock.in = in;
    CommandLine commandLine = new CommandLine(dlock).setOut(out).setErr(err);
    commandLine.setParameterExceptionHandler(
        (ex, ignored) -> {
          err.println(
              "dlock: "
                  + ex.getMessage()
                  + " (see '"
                  + ex.getCommandLine().getCommandSpec().qualifiedName()
                  + " --help')");
          return ExitCodes.USAGE;
        });
    commandLine.setExecutionExceptionHandler(
        (ex, cmd, parsed) -> {
          int status;
          String message;
          if (ex instanceof BackendUnavailableException) {
            status = ExitCodes.UNAVAILABLE;
            message = "backend unavailable: " + ex.getMessage();
          } else if (ex instanceof UnsupportedOperationException) {
            status = ExitCodes.UNAVAILABLE;
            message = ex.getMessage();
          } else if (ex instanceof BackendNotSetUpException) {
            status = ExitCodes.CONFIG;
            message = ex.getMessage();
          } else if (ex instanceof IllegalArgumentException) {
            status = ExitCodes.USAGE;
            message = ex.getMessage();
          } else {
            status = ExitCodes.SOFTWARE;
            message = "internal error: " + ex + (verbose ? "" : " (--verbose shows details)");
          }
          // One line, as every failure is: a driver's message may span several (PostgreSQL's
          // "Position:", H2's "SQL statement:").
          err.println(
              "dlock: "
                  + LockClients.redact(String.valueOf(message)).replaceAll("\\s*\\R\\s*", " "));
          if (verbose) {
            ex.printStackTrace(err);
          }
          err.flush();
          return status;
        });
    return commandLine.execute(args);
  }
}
