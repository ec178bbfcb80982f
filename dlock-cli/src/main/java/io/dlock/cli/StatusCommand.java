package io.dlock.cli;

import io.dlock.LeasedSemaphore;
import io.dlock.LockClient;
import io.dlock.LockInfo;
import io.dlock.PermitInfo;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.concurrent.Callable;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code dlock status}: the locks held now. */
@Command(
    name = "status",
    mixinStandardHelpOptions = true,
    description = {
      "List the locks held now: name, holder, fencing token, held since, lease left.",
      "With --semaphore, list the permits of the semaphore NAME held now."
    })
final class StatusCommand implements Callable<Integer> {
  private static final DateTimeFormatter TIME =
      DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss").withZone(ZoneId.systemDefault());

  @Spec CommandSpec spec;

  @Mixin BackendOptions backend = new BackendOptions();

  @Parameters(
      arity = "0..1",
      paramLabel = "PATTERN",
      defaultValue = "*",
      description = "lock names to show: * any characters, ? one (default: all)")
  String pattern = "*";

  @Option(names = "--json", description = "print JSON instead of a table")
  boolean json;

  @Option(
      names = "--semaphore",
      description =
          "PATTERN is a semaphore's name: list its permits (holder, count, fencing token)")
  boolean semaphore;

  @Override
  public Integer call() {
    if (semaphore) {
      return permits();
    }
    List<LockInfo> locks;
    try (LockClient client = backend.connect()) {
      locks = client.inspect(pattern);
    }
    PrintWriter out = spec.commandLine().getOut();
    if (json) {
      out.println(toJson(locks));
    } else if (locks.isEmpty()) {
      out.println("No locks held" + ("*".equals(pattern) ? "." : " matching '" + pattern + "'."));
    } else {
      String format = "%-32s %-40s %14s  %-19s  %s%n";
      out.printf(format, "NAME", "HOLDER", "FENCING TOKEN", "HELD SINCE", "LEASE LEFT");
      for (LockInfo lock : locks) {
        out.printf(
            format,
            lock.name(),
            lock.holder() + (lock.holds() > 1 ? " (x" + lock.holds() + ")" : ""),
            lock.fencingToken(),
            lock.heldSince() == null ? "-" : TIME.format(lock.heldSince()),
            lock.leaseRemaining() == null ? "session" : formatLeft(lock.leaseRemaining()));
      }
    }
    out.flush();
    return ExitCodes.OK;
  }

  /** The permits of the semaphore {@link #pattern} names. */
  private int permits() {
    List<PermitInfo> held;
    try (LockClient client = backend.connect()) {
      // The bound plays no part in inspection: any handle of the name lists its permits.
      held = client.semaphore(pattern, LeasedSemaphore.MAX_PERMITS).holders();
    }
    PrintWriter out = spec.commandLine().getOut();
    if (json) {
      StringBuilder text = new StringBuilder("[");
      for (int i = 0; i < held.size(); i++) {
        PermitInfo permit = held.get(i);
        text.append(i == 0 ? "" : ",")
            .append("{\"semaphore\":")
            .append(quote(permit.semaphore()))
            .append(",\"holder\":")
            .append(quote(permit.holder()))
            .append(",\"fencingToken\":")
            .append(permit.fencingToken())
            .append(",\"count\":")
            .append(permit.count())
            .append(",\"heldSince\":")
            .append(permit.heldSince() == null ? "null" : quote(permit.heldSince().toString()))
            .append(",\"leaseRemainingMillis\":")
            .append(permit.leaseRemaining() == null ? "null" : permit.leaseRemaining().toMillis())
            .append('}');
      }
      out.println(text.append(']'));
    } else if (held.isEmpty()) {
      out.println("No permits of semaphore '" + pattern + "' held.");
    } else {
      String format = "%-40s %5s %14s  %-19s  %s%n";
      out.printf(format, "HOLDER", "COUNT", "FENCING TOKEN", "HELD SINCE", "LEASE LEFT");
      for (PermitInfo permit : held) {
        out.printf(
            format,
            permit.holder(),
            permit.count(),
            permit.fencingToken(),
            permit.heldSince() == null ? "-" : TIME.format(permit.heldSince()),
            permit.leaseRemaining() == null ? "session" : formatLeft(permit.leaseRemaining()));
      }
    }
    out.flush();
    return ExitCodes.OK;
  }

  static String formatLeft(Duration left) {
    return String.format(java.util.Locale.ROOT, "%.1fs", left.toMillis() / 1000.0);
  }

  static String toJson(List<LockInfo> locks) {
    StringBuilder json = new StringBuilder("[");
    for (int i = 0; i < locks.size(); i++) {
      LockInfo lock = locks.get(i);
      json.append(i == 0 ? "" : ",")
          .append("{\"name\":")
          .append(quote(lock.name()))
          .append(",\"holder\":")
          .append(quote(lock.holder()))
          .append(",\"fencingToken\":")
          .append(lock.fencingToken())
          .append(",\"holds\":")
          .append(lock.holds())
          .append(",\"heldSince\":")
          .append(lock.heldSince() == null ? "null" : quote(lock.heldSince().toString()))
          .append(",\"leaseRemainingMillis\":")
          .append(lock.leaseRemaining() == null ? "null" : lock.leaseRemaining().toMillis())
          .append('}');
    }
    return json.append(']').toString();
  }

  static String quote(@Nullable String text) {
    if (text == null) {
      return "null";
    }
    StringBuilder out = new StringBuilder("\"");
    for (char c : text.toCharArray()) {
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        default -> {
          if (c < 0x20) {
            out.append(String.format("\\u%04x", (int) c));
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.append('"').toString();
  }

  static String describe(LockInfo lock) {
    Instant since = lock.heldSince();
    return "held by "
        + lock.holder()
        + " (fencing token "
        + lock.fencingToken()
        + (since == null ? "" : ", since " + TIME.format(since))
        + (lock.leaseRemaining() == null ? "" : ", lease left " + formatLeft(lock.leaseRemaining()))
        + ")";
  }
}
