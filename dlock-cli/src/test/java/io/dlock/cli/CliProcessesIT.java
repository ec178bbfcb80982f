package io.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClients;
import io.dlock.testkit.TestTiming;
import io.dlock.testkit.server.RedisServerProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * What only separate OS processes show, on one backend (a redis-server the test starts): the
 * packaged jar runs as from a shell. Four processes racing on one counter; a command's output and
 * status passed through; the exit status of a lost lease; one line and no stack trace for a bad
 * command line (the jar's own logging set-up); and SIGTERM to dlock stopping its command and giving
 * the lock back at once. {@link CliContract} runs the whole contract in process on every backend.
 */
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class CliProcessesIT {
  private static RedisServerProcess redis;
  private static CliProcesses cli;

  @TempDir Path dir;
  private final List<Cli.Running> started = new ArrayList<>();
  private String prefix = "";

  @BeforeAll
  static void start() throws Exception {
    redis = RedisServerProcess.start();
    cli = new CliProcesses(Files.createTempDirectory("dlock-cli-processes"), redis.uri());
  }

  @AfterAll
  static void stop() {
    redis.close();
  }

  @BeforeEach
  void names() {
    prefix = "cli-" + UUID.randomUUID().toString().substring(0, 8) + "-";
  }

  @AfterEach
  void stopProcesses() {
    started.forEach(Cli.Running::stop);
  }

  @Test
  void fourProcessesRunning10TimesEachNeverLoseAnIncrement() throws Exception {
    // 10 each, not the 25 each that every backend runs in process (CliContract): a JVM start per
    // run costs about a second of CPU on two cores, and the race is the same; without the lock the
    // runners lose increments within 10 each (RedisCliTest's negative control).
    CliChecks.fourRunnersLoseNoIncrement(
        dir, prefix + "counter", 10, args -> dlock(args[0], rest(args)));
  }

  @Test
  void theCommandsOutputAndStatusPassThrough() {
    String name = prefix + "env";
    Cli.Result result =
        dlock(
            "run",
            "--name",
            name,
            "--",
            "sh",
            "-c",
            "echo \"$DLOCK_NAME $DLOCK_FENCING_TOKEN\"; exit 7");
    assertThat(result.exit()).isEqualTo(7);
    assertThat(result.out().trim()).matches(java.util.regex.Pattern.quote(name) + " [0-9]+");
  }

  @Test
  void aLostLeaseStopsTheCommandAndTheProcessExitsWithItsOwnStatus() throws Exception {
    String name = prefix + "lost";
    Path errFile = dir.resolve("lost.err");
    Cli.Running holder =
        background(
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
    awaitHeld(name);
    redis.command("DEL", "dlock:{" + name + "}");
    assertThat(holder.waitFor(TestTiming.millis(20_000).toMillis(), TimeUnit.MILLISECONDS))
        .isTrue();
    assertThat(holder.exitValue()).isEqualTo(ExitCodes.LEASE_LOST);
    assertThat(Files.readString(errFile)).contains("lease of '" + name + "' was lost");
  }

  @Test
  void sigtermStopsTheCommandAndGivesTheLockBackAtOnce() throws Exception {
    String name = prefix + "term";
    Path marker = dir.resolve("term.marker");
    // The command leaves a marker when SIGTERM reaches it: dlock passes the stop on.
    Cli.Running holder =
        background(
            dir.resolve("term.err"),
            "run",
            "--name",
            name,
            "--lease",
            "60s",
            "--",
            "sh",
            "-c",
            "trap 'touch \"" + marker + "\"; exit 143' TERM; sleep 120 & wait");
    awaitHeld(name);
    holder.stop();
    assertThat(holder.exitValue()).isNotZero();
    assertThat(marker).exists();
    // Released by the shutdown hook, not by its 60 s lease running out: free at once.
    try (LockClient client = LockClients.connect(redis.uri())) {
      Optional<Lease> lease = client.lock(name).tryAcquire();
      assertThat(lease).as("the lock was given back").isPresent();
      lease.get().release();
    }
  }

  @Test
  void aBadCommandLineGivesTheUsageStatusAndOneLineOnStandardError() {
    for (String[] args :
        List.of(
            new String[] {"run", "--backend", "foo://nowhere", "--name", "x", "--", "true"},
            new String[] {"frobnicate"})) {
      Cli.Result result = cli.run(TestTiming.millis(60_000), args);
      assertThat(result.exit()).as(result.toString()).isEqualTo(ExitCodes.USAGE);
      assertThat(result.err().strip().lines()).as(result.err()).hasSize(1);
      assertThat(result.err()).doesNotContain("Exception").doesNotContain("\tat ");
    }
  }

  private Cli.Result dlock(String command, String... args) {
    List<String> all = new ArrayList<>(List.of(command, "--backend", redis.uri()));
    all.addAll(List.of(args));
    return cli.run(TestTiming.millis(60_000), all.toArray(new String[0]));
  }

  private Cli.Running background(Path errFile, String command, String... args) {
    List<String> all = new ArrayList<>(List.of(command, "--backend", redis.uri()));
    all.addAll(List.of(args));
    Cli.Running running =
        cli.start(dir.resolve(errFile.getFileName() + ".out"), errFile, all.toArray(new String[0]));
    started.add(running);
    return running;
  }

  private void awaitHeld(String name) {
    CliChecks.awaitHeld(name, args -> dlock(args[0], rest(args)));
  }

  private static String[] rest(String[] args) {
    return java.util.Arrays.copyOfRange(args, 1, args.length);
  }
}
