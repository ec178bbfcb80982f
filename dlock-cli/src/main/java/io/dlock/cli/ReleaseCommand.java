package io.dlock.cli;

import io.dlock.LockClient;
import io.dlock.LockInfo;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

/** {@code dlock release --force}: an administrator's break of a stuck lock. */
@Command(
    name = "release",
    mixinStandardHelpOptions = true,
    description = {
      "Break a lock whatever its holder, and print who held it.",
      "The holder learns at its next renewal (within a third of its lease) that its lease is lost.",
      "Waiters are woken."
    })
final class ReleaseCommand implements Callable<Integer> {

  @Spec CommandSpec spec;

  @ParentCommand Dlock dlock;

  @Mixin BackendOptions backend = new BackendOptions();

  @Option(
      names = "--force",
      required = true,
      description = "required: say that you mean to break someone else's lock")
  boolean force;

  @Option(
      names = {"-y", "--yes"},
      description = "do not ask for confirmation")
  boolean yes;

  @Parameters(index = "0", paramLabel = "NAME", description = "the lock's name")
  String name = "";

  @Override
  public Integer call() throws IOException {
    PrintWriter out = spec.commandLine().getOut();
    try (LockClient client = backend.connect()) {
      Optional<LockInfo> current =
          client.inspect(name).stream().filter(l -> l.name().equals(name)).findFirst();
      if (current.isEmpty()) {
        out.println("Lock '" + name + "' is not held.");
        out.flush();
        return ExitCodes.NOTHING_DONE;
      }
      if (!yes) {
        out.print(
            "Lock '"
                + name
                + "' is "
                + StatusCommand.describe(current.get())
                + ". Break it? [y/N] ");
        out.flush();
        String answer =
            new BufferedReader(new InputStreamReader(dlock.in(), StandardCharsets.UTF_8))
                .readLine();
        if (answer == null || !answer.trim().toLowerCase(Locale.ROOT).startsWith("y")) {
          out.println("Not released.");
          out.flush();
          return ExitCodes.NOTHING_DONE;
        }
      }
      Optional<LockInfo> broken = client.forceRelease(name);
      if (broken.isEmpty()) {
        out.println("Lock '" + name + "' was released by its holder meanwhile.");
        out.flush();
        return ExitCodes.NOTHING_DONE;
      }
      out.println("Released lock '" + name + "', " + StatusCommand.describe(broken.get()) + ".");
      out.flush();
      return ExitCodes.OK;
    }
  }
}
