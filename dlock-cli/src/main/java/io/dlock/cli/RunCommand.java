package io.dlock.cli;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LeasedSemaphore;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockInterruptedException;
import io.dlock.LockNames;
import io.dlock.LockOptions;
import io.dlock.LockTimeoutException;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code dlock run}: flock(1) across machines. */
@Command(
    name = "run",
    mixinStandardHelpOptions = true,
    description = {
      "Run COMMAND while holding the lock NAME, and exit with its status.",
      "The lease is renewed while the command runs and released when it exits.",
      "The command sees DLOCK_NAME and DLOCK_FENCING_TOKEN in its environment.",
      "With --elect NAME instead of --name, the command runs while this process leads the"
          + " election NAME, and is stopped when its term ends (exit 76).",
      "With --permits N, NAME is a semaphore: the command runs while holding one of its N"
          + " permits, so at most N copies run at once across machines."
    })
final class RunCommand implements Callable<Integer> {

  /** What to do when the lease is lost while the command runs. */
  enum OnLost {
    kill,
    warn
  }

  @Spec CommandSpec spec;

  @Mixin BackendOptions backend = new BackendOptions();

  @Option(names = "--name", paramLabel = "NAME", description = "the lock's name")
  @Nullable String name;

  @Option(
      names = "--elect",
      paramLabel = "NAME",
      description =
          "instead of --name: join the election NAME and run COMMAND while leading it, with"
              + " DLOCK_ELECTION and DLOCK_EPOCH; the term's end stops it and exits 76")
  @Nullable String elect;

  @Option(
      names = "--permits",
      paramLabel = "N",
      description =
          "with --name: NAME is a semaphore of N permits (1 to "
              + LeasedSemaphore.MAX_PERMITS
              + "), and COMMAND runs holding one of them: at most N copies run at once")
  @Nullable Integer permits;

  /** The longest --wait taken; leaving --wait out waits without limit. */
  static final Duration MAX_WAIT = Duration.ofDays(365);

  @Option(
      names = "--wait",
      paramLabel = "DURATION",
      converter = Durations.class,
      description =
          "how long to wait for the lock (--elect: to be elected), connecting included"
              + " (5 = 5 seconds, 500ms, 30s, 5m);"
              + " 0 = one attempt; default: no limit")
  @Nullable Duration wait;

  @Option(
      names = "--lease",
      paramLabel = "DURATION",
      converter = Durations.class,
      defaultValue = "30s",
      description =
          "the lease, renewed every third of it while dlock runs (default: ${DEFAULT-VALUE})")
  Duration lease = Duration.ofSeconds(30);

  @Option(
      names = "--on-lost",
      paramLabel = "kill|warn",
      defaultValue = "kill",
      description =
          "if the lease is lost: kill = SIGTERM the command, SIGKILL after --kill-after,"
              + " exit 76; warn = only warn (default: ${DEFAULT-VALUE})")
  OnLost onLost = OnLost.kill;

  @Option(
      names = "--kill-after",
      paramLabel = "DURATION",
      converter = Durations.class,
      defaultValue = "10s",
      description = "grace between SIGTERM and SIGKILL (default: ${DEFAULT-VALUE})")
  Duration killAfter = Duration.ofSeconds(10);

  @Option(
      names = "--conflict-exit-code",
      paramLabel = "N",
      defaultValue = "75",
      description =
          "exit status when the lock is not acquired (or not elected) within --wait"
              + " (default: ${DEFAULT-VALUE})")
  int conflictExitCode = ExitCodes.NOT_ACQUIRED;

  @Parameters(arity = "1..*", paramLabel = "COMMAND", description = "the command and its arguments")
  List<String> command = List.of();

  /** The least time connecting gets when --wait is positive. */
  static final Duration MIN_CONNECT = Duration.ofSeconds(2);

  /** Acquire's wait when --wait is left out: a century, as good as no limit. */
  private static final Duration NO_LIMIT = Duration.ofDays(365 * 100);

  /** Whether the calling thread was interrupted (run in process): set again once all is done. */
  private boolean interrupted;

  @Override
  public Integer call() {
    if (wait != null && (wait.isNegative() || wait.compareTo(MAX_WAIT) > 0)) {
      throw new IllegalArgumentException(
          "--wait must be from 0 to "
              + Durations.format(MAX_WAIT)
              + " (leave it out to wait without limit), but was "
              + Durations.format(wait));
    }
    if (conflictExitCode < 0 || conflictExitCode > 255) {
      throw new IllegalArgumentException("--conflict-exit-code must be from 0 to 255");
    }
    checkLockOrElection();
    LockOptions options = LockOptions.defaults().withRenewedLease(lease);
    PrintWriter err = spec.commandLine().getErr();
    try (RunShutdown shutdown = RunShutdown.install(lockName(), killAfter, err)) {
      return elect == null
          ? acquireAndRun(options, err, shutdown)
          : electAndRun(elect, options, err, shutdown);
    } finally {
      if (interrupted) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Exactly one of --name and --elect, checked before anything connects. */
  private void checkLockOrElection() {
    if (name == null && elect == null) {
      throw new ParameterException(
          spec.commandLine(),
          "Missing required option: '--name=NAME' (or '--elect=NAME' to run while leading an"
              + " election)");
    }
    if (name != null && elect != null) {
      throw new ParameterException(
          spec.commandLine(),
          "--elect NAME names the election's lock: give --name or --elect, not both");
    }
    if (permits != null) {
      if (elect != null) {
        throw new ParameterException(
            spec.commandLine(), "--permits counts a semaphore's permits: give it with --name");
      }
      if (permits < 1 || permits > LeasedSemaphore.MAX_PERMITS) {
        throw new ParameterException(
            spec.commandLine(),
            "--permits must be from 1 to " + LeasedSemaphore.MAX_PERMITS + ", but was " + permits);
      }
    }
    if (elect != null) {
      try {
        LockNames.requireValid(elect);
      } catch (IllegalArgumentException e) {
        throw new ParameterException(
            spec.commandLine(), "--elect: the election's " + e.getMessage());
      }
      if (onLost == OnLost.warn) {
        throw new ParameterException(
            spec.commandLine(),
            "--on-lost warn cannot be used with --elect: the command runs only while its term"
                + " stands, and is stopped when it ends");
      }
    }
  }

  /** The lock's name, or the election's (whose lock bears its name). */
  private String lockName() {
    return elect != null ? elect : Objects.requireNonNull(name);
  }

  /** What the connection left of the wait (none left still makes one attempt); null: no limit. */
  private @Nullable Duration waitLeft(long start) {
    return wait == null ? null : max(Duration.ZERO, wait.minusNanos(System.nanoTime() - start));
  }

  /**
   * Connects within the wait's bound; null if the calling thread was stopped meanwhile (nothing is
   * held).
   */
  private @Nullable LockClient connect(Supplier<LockClient> connector) {
    try {
      return BoundedConnect.connect(
          connector, connectBound(), LockClients.redact(backend.uri()), connectBoundText());
    } catch (InterruptedException e) {
      interrupted = true;
      return null;
    }
  }

  private int electAndRun(
      String election, LockOptions options, PrintWriter err, RunShutdown shutdown) {
    long start = System.nanoTime();
    ElectedRun run = new ElectedRun(election, command, killAfter, err, shutdown);
    // A bad --config fails before any wait.
    Supplier<LockClient> connector =
        backend.connector(LockClientOptions.defaults().withEventListener(run.attempts()));
    LockClient connected = connect(connector);
    if (connected == null) {
      return ExitCodes.INTERRUPTED;
    }
    try (LockClient client = connected) {
      return run.run(
          client,
          options,
          waitLeft(start),
          LockClientOptions.defaults().operationTimeout(),
          conflictExitCode,
          wait == null ? "no limit" : Durations.format(wait));
    } finally {
      interrupted |= run.interrupted();
    }
  }

  private int acquireAndRun(LockOptions options, PrintWriter err, RunShutdown shutdown) {
    long start = System.nanoTime();
    Supplier<LockClient> connector = backend.connector(); // a bad --config fails before any wait
    LockClient connected = connect(connector);
    if (connected == null) {
      return ExitCodes.INTERRUPTED;
    }
    try (LockClient client = connected) {
      Lease held;
      try {
        Duration left = waitLeft(start);
        held =
            permits == null
                ? client.lock(lockName(), options).acquire(left == null ? NO_LIMIT : left)
                : client
                    .semaphore(lockName(), permits, options)
                    .acquire(left == null ? NO_LIMIT : left);
      } catch (LockTimeoutException e) {
        err.println(
            permits == null
                ? "dlock: lock '" + lockName() + "' not acquired within " + Durations.format(wait)
                : "dlock: no permit of semaphore '"
                    + lockName()
                    + "' ("
                    + permits
                    + " permits) within "
                    + Durations.format(wait));
        err.flush();
        return conflictExitCode;
      } catch (LockInterruptedException e) {
        clearInterrupt(); // so that the client's close below runs in full
        return ExitCodes.INTERRUPTED;
      }
      return runHolding(held, err, shutdown);
    }
  }

  /**
   * How long connecting may take: the wait, since the connection is part of getting the lock, but
   * at least {@link #MIN_CONNECT}, since connecting takes time of its own (a fresh JVM loads the
   * client first) that a short wait for a busy lock should not turn into "unavailable"; with {@code
   * --wait 0} (one attempt), the client's operation timeout, which bounds that attempt too; without
   * {@code --wait}, no bound beyond the backend's own.
   */
  private @Nullable Duration connectBound() {
    if (wait == null) {
      return null;
    }
    return wait.isZero() ? LockClientOptions.defaults().operationTimeout() : max(wait, MIN_CONNECT);
  }

  /** The connection's bound as the message names it. */
  private String connectBoundText() {
    Duration bound = connectBound();
    if (bound == null || wait == null) {
      return "the backend's own timeouts";
    }
    if (wait.isZero()) {
      return Durations.format(bound)
          + " (with --wait 0, the operation timeout bounds the connection)";
    }
    return bound.equals(wait)
        ? "--wait " + Durations.format(wait)
        : Durations.format(bound)
            + " (--wait "
            + Durations.format(wait)
            + ", at least "
            + Durations.format(MIN_CONNECT)
            + " to connect)";
  }

  private static Duration max(Duration a, Duration b) {
    return a.compareTo(b) >= 0 ? a : b;
  }

  private int runHolding(Lease held, PrintWriter err, RunShutdown shutdown) {
    ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
    builder.environment().put("DLOCK_NAME", lockName());
    builder.environment().put("DLOCK_FENCING_TOKEN", Long.toString(held.fencingToken()));
    Process child;
    try {
      child = shutdown.start(builder);
    } catch (IOException e) {
      err.println("dlock: cannot run '" + command.get(0) + "': " + e.getMessage());
      err.flush();
      release(held, err, shutdown);
      return ExitCodes.COMMAND_NOT_FOUND;
    }
    if (child == null) { // dlock is being stopped: the command is not started
      clearInterrupt();
      release(held, err, shutdown);
      return ExitCodes.INTERRUPTED;
    }
    AtomicBoolean stopped = new AtomicBoolean();
    AtomicBoolean told = new AtomicBoolean();
    held.onLost(event -> onLost(event.detail(), child, stopped, told, err));
    int status;
    try {
      status = child.waitFor();
    } catch (InterruptedException e) {
      // Run inside another program's thread, which stopped it: as for a signal to dlock itself,
      // stop the command and give the lock back before returning.
      interrupted = true;
      stop(child, killAfter);
      boolean stillHeld = release(held, err, shutdown);
      return stopped.get() || (!stillHeld && onLost == OnLost.kill)
          ? ExitCodes.LEASE_LOST
          : ExitCodes.INTERRUPTED;
    }
    boolean stillHeld = release(held, err, shutdown);
    if (stopped.get()) {
      return ExitCodes.LEASE_LOST;
    }
    if (stillHeld) {
      return status;
    }
    // Lost while the command ran and found only now (a command shorter than a renewal, a lock
    // broken with release --force). The loss is said here unless its notice said it (the release
    // fires it too, but on another thread that this JVM may not wait for). --on-lost=warn keeps
    // the command's status; kill does not let it hide that the command ran without the lock for
    // some of its time.
    onLost("the release found the grant already gone", child, stopped, told, err);
    return onLost == OnLost.warn ? status : ExitCodes.LEASE_LOST;
  }

  private void clearInterrupt() {
    if (Thread.interrupted()) {
      interrupted = true;
    }
  }

  private void onLost(
      String detail, Process child, AtomicBoolean stopped, AtomicBoolean told, PrintWriter err) {
    if (told.getAndSet(true)) {
      return;
    }
    if (!child.isAlive()) {
      // Found after the command ended (at the release, or by a renewal just after): nothing is
      // left to stop or to go on, and the status says it (76, or the command's with warn).
      err.println(
          "dlock: "
              + (onLost == OnLost.warn ? "warning: " : "")
              + "the lease of '"
              + lockName()
              + "' was lost ("
              + detail
              + "), found after the command ended: it may have run without the lock for some of"
              + " its time");
      err.flush();
      return;
    }
    if (onLost == OnLost.warn) {
      err.println(
          "dlock: warning: the lease of '"
              + lockName()
              + "' was lost ("
              + detail
              + ");"
              + " the command goes on without the lock");
      err.flush();
      return;
    }
    err.println(
        "dlock: the lease of '" + lockName() + "' was lost (" + detail + "); stopping the command");
    err.flush();
    stopped.set(true);
    stop(child, killAfter);
  }

  /** SIGTERM to the command and its descendants, SIGKILL after the grace period. */
  static void stop(Process child, Duration grace) {
    List<ProcessHandle> tree = child.descendants().toList();
    child.destroy();
    tree.forEach(ProcessHandle::destroy);
    try {
      if (!child.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
        child.destroyForcibly();
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      child.destroyForcibly();
    }
    tree.stream().filter(ProcessHandle::isAlive).forEach(ProcessHandle::destroyForcibly);
  }

  /**
   * Gives the lock back and tells a stopping JVM that it may end. Whether the lease was still held
   * (false: it had been lost, whether or not the loss was reported before); a release the backend
   * did not answer is reported, and counted as held (it expires within its lease).
   */
  private boolean release(Lease held, PrintWriter err, RunShutdown shutdown) {
    try {
      return held.release();
    } catch (BackendUnavailableException e) {
      err.println("dlock: warning: " + e.getMessage());
      err.flush();
      return true;
    } finally {
      shutdown.released();
    }
  }
}
