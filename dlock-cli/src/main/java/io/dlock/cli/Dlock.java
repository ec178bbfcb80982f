package io.dlock.cli;

import io.dlock.BackendUnavailableException;
import io.dlock.LockClients;
import java.io.PrintWriter;
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
      "64:bad command line (unknown option, malformed URI or duration)",
      "69:backend unreachable, or it cannot do what was asked",
      "70:internal error",
      "75:run: lock not acquired within --wait",
      "76:run: lease lost while the command ran; the command was stopped",
      "127:run: the command could not be started"
    })
public final class Dlock implements Runnable {

  @Spec CommandSpec spec;

  @Override
  public void run() {
    throw new CommandLine.ParameterException(
        spec.commandLine(), "a command is needed: run, status, release or demo");
  }

  public static void main(String[] args) {
    System.exit(execute(args));
  }

  /** Runs the command line and returns its exit status; never calls System.exit. */
  static int execute(String... args) {
    boolean verbose =
        Arrays.asList(args).contains("-v") || Arrays.asList(args).contains("--verbose");
    CommandLine commandLine = new CommandLine(new Dlock());
    commandLine.setParameterExceptionHandler(
        (ex, ignored) -> {
          PrintWriter err = ex.getCommandLine().getErr();
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
          PrintWriter err = cmd.getErr();
          int status;
          String message;
          if (ex instanceof BackendUnavailableException) {
            status = ExitCodes.UNAVAILABLE;
            message = "backend unavailable: " + ex.getMessage();
          } else if (ex instanceof UnsupportedOperationException) {
            status = ExitCodes.UNAVAILABLE;
            message = ex.getMessage();
          } else if (ex instanceof IllegalArgumentException) {
            status = ExitCodes.USAGE;
            message = ex.getMessage();
          } else {
            status = ExitCodes.SOFTWARE;
            message = "internal error: " + ex + (verbose ? "" : " (--verbose shows details)");
          }
          err.println("dlock: " + LockClients.redact(String.valueOf(message)));
          if (verbose) {
            ex.printStackTrace(err);
          }
          err.flush();
          return status;
        });
    return commandLine.execute(args);
  }
}
