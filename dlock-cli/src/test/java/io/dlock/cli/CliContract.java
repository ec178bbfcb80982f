package io.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.testkit.TestTiming;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The contract of the {@code dlock} command on a real backend, driven through the command's own
 * entry point in this JVM ({@link InProcessCli}): every run parses its arguments, connects its own
 * client and starts its command as the packaged jar does. Each backend's test extends this class;
 * {@link CliProcessesIT} runs what only separate OS processes show.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
abstract class CliContract {

  /** The backend URI the processes use. */
  protected abstract String backendUri();

  /** Deletes the lock on the server behind its holder's back. */
  protected abstract void deleteLockOnServer(String name);

  private final Cli cli = new InProcessCli();

  private Cli cli() {
    return cli;
  }

  @TempDir Path dir;
  private final List<Cli.Running> started = new ArrayList<>();
  private String prefix = "";

  @BeforeEach
  void names() {
    prefix = "cli-" + UUID.randomUUID().toString().substring(0, 8) + "-";
  }

  @AfterEach
  void stopProcesses() {
    started.forEach(Cli.Running::stop);
  }

  private static Duration scaled(long millis) {
    return TestTiming.millis(millis);
  }

  @Test
  void fourRunnersRunning25TimesEachNeverLoseAnIncrement() throws Exception {
    // 25 each: the negative control (RedisCliTest) loses increments within 10 without the lock;
    // the lock's own races run many more times in every backend's contract suite (dlock-testkit).
    CliChecks.fourRunnersLoseNoIncrement(
        dir, prefix + "counter", 25, args -> dlock(args[0], rest(args)));
  }

  @Test
  void runPassesTheCommandsStatusAndTheLockToTheCommand() throws Exception {
    String name = prefix + "env";
    // The command writes to a file: in process, its standard output is this JVM's.
    Path seen = dir.resolve("env.txt");
    Cli.Result result =
        dlock(
            "run",
            "--name",
            name,
            "--",
            "sh",
            "-c",
            "echo \"$DLOCK_NAME $DLOCK_FENCING_TOKEN\" > '" + seen + "'; exit 7");
    assertThat(result.exit()).isEqualTo(7);
    assertThat(Files.readString(seen).trim())
        .matches(java.util.regex.Pattern.quote(name) + " [0-9]+");
    assertThat(dlock("run", "--name", name, "--", "/no/such/command").exit())
        .isEqualTo(ExitCodes.COMMAND_NOT_FOUND);
  }

  @Test
  void theWaitBoundGivesTheConflictStatus() throws Exception {
    String name = prefix + "busy";
    Cli.Running holder = holding(name, "30s");
    Cli.Result refused = dlock("run", "--name", name, "--wait", "500ms", "--", "true");
    assertThat(refused.exit()).isEqualTo(ExitCodes.NOT_ACQUIRED);
    assertThat(refused.err()).contains("not acquired within 500ms");
    Cli.Result custom =
        dlock("run", "--name", name, "--wait", "0", "--conflict-exit-code", "9", "--", "true");
    assertThat(custom.exit()).isEqualTo(9);
    // Stopped while its command runs (an interrupt in process): the command is stopped and the
    // lock given back at once, not when its 30 s lease runs out.
    holder.stop();
    assertThat(holder.exitValue()).isEqualTo(ExitCodes.INTERRUPTED);
    assertThat(dlock("run", "--name", name, "--wait", "0", "--", "true").exit()).isZero();
  }

  @Test
  void aLeaseBrokenBeforeAShortCommandEndsGivesTheLostStatus() throws Exception {
    // Issue 30, item 3: broken while the command ran (release --force, or a delete on the server),
    // the loss seen only at the release, after the command ended; that must not let dlock exit 0.
    String name = prefix + "short";
    Path go = dir.resolve("short.go");
    Path errFile = dir.resolve("short.err");
    // A 30 s lease: no renewal comes before the command ends, so only the release finds the loss.
    Cli.Running holder =
        dlockInBackground(
            dir.resolve("short.out"),
            errFile,
            "run",
            "--name",
            name,
            "--lease",
            "30s",
            "--",
            "sh",
            "-c",
            "while [ ! -e '" + go + "' ]; do sleep 0.05; done; exit 0");
    started.add(holder);
    awaitHeld(name);
    // Behind its back, as each backend's test does it (on ZooKeeper and PostgreSQL, the forced
    // release that release --force makes). Not with release --force itself: on Redlock, whose
    // masters get 0.5 s each, it once found the lock not held on a machine at load 30.
    deleteLockOnServer(name);
    Files.writeString(go, "");
    assertThat(holder.waitFor(scaled(30_000).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    assertThat(holder.exitValue()).isEqualTo(ExitCodes.LEASE_LOST);
    assertThat(Files.readString(errFile))
        .contains("lease of '" + name + "' was lost")
        .contains("found after the command ended")
        .doesNotContain("stopping the command"); // it had ended: nothing was stopped
  }

  @Test
  void aLostLeaseStopsTheCommandAndExitsWithItsOwnStatus() throws Exception {
    String name = prefix + "lost";
    Path errFile = dir.resolve("lost.err");
    Cli.Running holder =
        dlockInBackground(
            dir.resolve("lost.out"),
            errFile,
            "run",
            "--name",
            name,
            "--lease",
            "1s",
            "--kill-after",
            "2s",
            "--",
            "sleep",
            "120");
    started.add(holder);
    awaitHeld(name);
    long deleted = System.nanoTime();
    deleteLockOnServer(name);
    assertThat(holder.waitFor(scaled(20_000).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    assertThat(holder.exitValue()).isEqualTo(ExitCodes.LEASE_LOST);
    // Noticed at the next renewal (a third of the lease), and sleep stops at SIGTERM.
    assertThat(Duration.ofNanos(System.nanoTime() - deleted)).isLessThan(scaled(8_000));
    assertThat(Files.readString(errFile)).contains("lease of '" + name + "' was lost");
  }

  @Test
  void onLostWarnLetsTheCommandFinish() throws Exception {
    String name = prefix + "warn";
    Path errFile = dir.resolve("warn.err");
    Path go = dir.resolve("warn.go");
    Cli.Running holder =
        dlockInBackground(
            dir.resolve("warn.out"),
            errFile,
            "run",
            "--name",
            name,
            "--lease",
            "1s",
            "--on-lost=warn",
            "--",
            "sh",
            "-c",
            // Runs until told: past the loss's notice (a third of the lease after the delete).
            "while [ ! -e '" + go + "' ]; do sleep 0.05; done; exit 5");
    started.add(holder);
    awaitHeld(name);
    deleteLockOnServer(name);
    await()
        .atMost(scaled(20_000))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> Files.readString(errFile).contains("goes on without the lock"));
    assertThat(holder.waitFor(100, TimeUnit.MILLISECONDS)).as("still running").isFalse();
    Files.writeString(go, "");
    assertThat(holder.waitFor(scaled(30_000).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    assertThat(holder.exitValue()).isEqualTo(5);
    assertThat(Files.readString(errFile)).contains("warning");
  }

  @Test
  void statusShowsTheHolderAndReleaseForceFreesTheLock() throws Exception {
    String name = prefix + "admin";
    // A short lease: the holder learns of the break at its next renewal, a third of it later.
    Cli.Running holder = holding(name, "3s");
    long pid = holder.pid();
    // The token the holder's command was given: the status must show this grant, not any.
    String token = Files.readString(dir.resolve(name + ".token")).trim();

    Cli.Result json = dlock("status", prefix + "*", "--json");
    assertThat(json.exit()).isZero();
    assertThat(json.out())
        .contains("\"name\":\"" + name + "\"")
        .contains("/" + pid + "/")
        .contains("\"fencingToken\":" + token);
    Cli.Result table = dlock("status");
    assertThat(table.out()).contains("NAME").contains(name).contains("/" + pid + "/");

    Cli.Result declined =
        cli()
            .runWithInput(
                "n\n", scaled(60_000), "release", "--force", name, "--backend", backendUri());
    assertThat(declined.exit()).isEqualTo(ExitCodes.NOTHING_DONE);
    assertThat(declined.out()).contains("Not released");

    // Confirmed on standard input this time (--yes is the other way, tried on a free lock below).
    Cli.Result broken =
        cli()
            .runWithInput(
                "y\n", scaled(60_000), "release", "--force", name, "--backend", backendUri());
    assertThat(broken.exit()).isZero();
    assertThat(broken.out()).contains("Released lock '" + name + "'").contains("/" + pid + "/");
    // The holder learns of it at its next renewal and stops its command.
    assertThat(holder.waitFor(scaled(30_000).toMillis(), TimeUnit.MILLISECONDS)).isTrue();
    assertThat(holder.exitValue()).isEqualTo(ExitCodes.LEASE_LOST);
    assertThat(dlock("release", "--force", "--yes", name).exit()).isEqualTo(ExitCodes.NOTHING_DONE);
  }

  @Test
  void badArgumentsGiveTheUsageStatusAndOneLine() {
    assertUsage(
        cli().run(scaled(60_000), "run", "--backend", "foo://nowhere", "--name", "x", "--", "true"),
        "not supported");
    assertUsage(dlock("status", "--bogus"), "Unknown option");
    assertUsage(dlock("run", "--name", "x", "--wait", "-1s", "--", "true"), "not a duration");
    assertUsage(dlock("run", "--name", "x", "--lease", "0ms", "--", "true"), "leaseTime");
    assertUsage(dlock("run", "--name", "", "--", "true"), "name");
    assertUsage(cli().run(scaled(60_000), "frobnicate"), "frobnicate");
  }

  /** Runs {@code dlock COMMAND --backend <this backend> ARGS...} to its end. */
  Cli.Result dlock(String command, String... args) {
    return cli().run(scaled(60_000), withBackend(command, args));
  }

  /** Starts {@code dlock COMMAND --backend <this backend> ARGS...}; output goes to files. */
  private Cli.Running dlockInBackground(Path out, Path err, String command, String... args) {
    return cli().start(out, err, withBackend(command, args));
  }

  private String[] withBackend(String command, String... args) {
    List<String> all = new ArrayList<>(List.of(command, "--backend", backendUri()));
    all.addAll(List.of(args));
    return all.toArray(new String[0]);
  }

  private static void assertUsage(Cli.Result result, String mention) {
    assertThat(result.exit()).as(result.toString()).isEqualTo(ExitCodes.USAGE);
    assertThat(result.err().strip().lines()).as(result.err()).hasSize(1);
    assertThat(result.err()).contains(mention).doesNotContain("Exception").doesNotContain("\tat ");
  }

  /**
   * Starts {@code dlock run NAME} with a command that writes its fencing token to {@code
   * NAME.token} and sleeps, and waits until it holds the lock.
   */
  private Cli.Running holding(String name, String lease) throws IOException {
    Cli.Running holder =
        dlockInBackground(
            dir.resolve(name + ".out"),
            dir.resolve(name + ".err"),
            "run",
            "--name",
            name,
            "--lease",
            lease,
            "--",
            "sh",
            "-c",
            "echo \"$DLOCK_FENCING_TOKEN\" > '"
                + dir.resolve(name + ".token")
                + "'; exec sleep 120");
    started.add(holder);
    awaitHeld(name);
    await()
        .atMost(scaled(20_000))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> Files.exists(dir.resolve(name + ".token")));
    return holder;
  }

  private void awaitHeld(String name) {
    CliChecks.awaitHeld(name, args -> dlock(args[0], rest(args)));
  }

  static String[] rest(String[] args) {
    return java.util.Arrays.copyOfRange(args, 1, args.length);
  }

  static String read(Path file) throws IOException {
    return Files.readString(file, StandardCharsets.UTF_8);
  }
}
