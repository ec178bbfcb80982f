package io.dlock.cli;

import io.dlock.LeasedSemaphore;
import io.dlock.LockClient;
import io.dlock.LockInfo;
import io.dlock.PermitInfo;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
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
      "Waiters are woken.",
      "With --permit TOKEN, NAME is a semaphore: break its permit with that fencing token."
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

  @Option(
      names = "--permit",
      paramLabel = "TOKEN",
      description =
          "NAME is a semaphore: break its permit with this fencing token (dlock status"
              + " --semaphore NAME lists them)")
  @Nullable Long permit;

  @Override
  public Integer call() throws IOException {
    PrintWriter out = spec.commandLine().getOut();
    if (permit != null) {
      return breakPermit(out, permit);
    }
    try (LockClient client = backend.connect()) {
      Optional<LockInfo> current =
          client.inspect(name).stream().filter(l -> l.name().equals(name)).findFirst();
      if (current.isEmpty()) {
        out.println("Lock '" + name + "' is not held.");
        out.flush();
        return ExitCodes.NOTHING_DONE;
      }
      if (!yes
          && !confirm(
              out,
              "Lock '" + name + "' is " + StatusCommand.describe(current.get()) + ". Break it?")) {
        return ExitCodes.NOTHING_DONE;
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

  /** Breaks the permit {@code token} of the semaphore {@link #name}. */
  private int breakPermit(PrintWriter out, long token) throws IOException {
    try (LockClient client = backend.connect()) {
      // The bound plays no part in a break: any handle of the name reaches its permits.
      LeasedSemaphore semaphore = client.semaphore(name, LeasedSemaphore.MAX_PERMITS);
      Optional<PermitInfo> current =
          semaphore.holders().stream().filter(p -> p.fencingToken() == token).findFirst();
      String what = "Permit " + token + " of semaphore '" + name + "'";
      if (current.isEmpty()) {
        out.println(what + " is not held.");
        out.flush();
        return ExitCodes.NOTHING_DONE;
      }
      if (!yes && !confirm(out, what + " is held by " + current.get().holder() + ". Break it?")) {
        return ExitCodes.NOTHING_DONE;
      }
      Optional<PermitInfo> broken = semaphore.forceRelease(token);
      out.println(
          broken.isEmpty()
              ? what + " was released by its holder meanwhile."
              : "Released "
                  + what.substring(0, 1).toLowerCase(Locale.ROOT)
                  + what.substring(1)
                  + ", held by "
                  + broken.get().holder()
                  + ".");
      out.flush();
      return broken.isEmpty() ? ExitCodes.NOTHING_DONE : ExitCodes.OK;
    }
  }

  private boolean confirm(PrintWriter out, String question) throws IOException {
    out.print(question + " [y/N] ");
    out.flush();
    String answer =
        new BufferedReader(new InputStreamReader(dlock.in(), StandardCharsets.UTF_8)).readLine();
    if (answer == null || !answer.trim().toLowerCase(Locale.ROOT).startsWith("y")) {
      out.println("Not released.");
      out.flush();
      return false;
    }
    return true;
  }
}
