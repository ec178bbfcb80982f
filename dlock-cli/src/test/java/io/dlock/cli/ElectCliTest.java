package io.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.LockClientOptions;
import io.dlock.testkit.TestTiming;
import io.dlock.testkit.server.RedisServerProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code dlock run --elect NAME} (issue 31): the command runs on the leader only, with its epoch; a
 * term broken under it stops it (76) and the standby's command starts with a higher epoch. Driven
 * in process on one redis-server; the election itself is proven on every backend by the contract
 * kit's {@code ElectionContract}.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class ElectCliTest {
  private static RedisServerProcess redis;

  private final Cli cli = new InProcessCli();
  private final List<Cli.Running> started = new ArrayList<>();
  private final String election = "elect-" + UUID.randomUUID().toString().substring(0, 8);
  @TempDir Path dir;

  @BeforeAll
  static void start() throws Exception {
    redis = RedisServerProcess.start();
  }

  @AfterAll
  static void stop() {
    redis.close();
  }

  @AfterEach
  void stopRuns() {
    started.forEach(Cli.Running::stop);
  }

  @Test
  void theLeaderAloneRunsTheCommandAndABrokenTermHandsItToTheStandby() throws Exception {
    Path terms = dir.resolve("terms");
    Cli.Running a = candidate("a", terms);
    Cli.Running b = candidate("b", terms);
    await()
        .atMost(TestTiming.millis(30_000))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> lines(terms).size() == 1);
    String[] first = lines(terms).get(0).split(" ");
    assertThat(first[1]).isEqualTo(election);
    long firstEpoch = Long.parseLong(first[2]);
    String leader = first[0];
    String standby = leader.equals("a") ? "b" : "a";
    Cli.Running leading = leader.equals("a") ? a : b;
    Cli.Running waiting = leader.equals("a") ? b : a;

    // A third candidate with --wait 0 gives up as soon as its attempt finds the leader: not after
    // the attempt's own bound (the operation timeout), which is there for an unanswered attempt.
    Cli.Result late = dlock("run", "--elect", election, "--wait", "0", "--", "true");
    assertThat(late.exit()).as(late.toString()).isEqualTo(ExitCodes.NOT_ACQUIRED);
    assertThat(late.err()).contains("not elected in '" + election + "' within 0s");
    assertThat(late.took()).isLessThan(LockClientOptions.defaults().operationTimeout());

    // Broken as an operator breaks a stuck lock: the leader hears it at its next renewal.
    assertThat(dlock("release", "--force", "--yes", election).exit()).isZero();
    assertThat(leading.waitFor(TestTiming.millis(30_000).toMillis(), TimeUnit.MILLISECONDS))
        .isTrue();
    assertThat(leading.exitValue()).isEqualTo(ExitCodes.LEASE_LOST);
    assertThat(Files.readString(dir.resolve(leader + ".err")))
        .contains("the term of election '" + election + "' (epoch " + firstEpoch + ") ended")
        .contains("taken over")
        .contains("stopping the command");
    await()
        .atMost(TestTiming.millis(30_000))
        .pollInterval(Duration.ofMillis(50))
        .until(() -> lines(terms).size() == 2);
    String[] second = lines(terms).get(1).split(" ");
    assertThat(second[0]).isEqualTo(standby);
    assertThat(Long.parseLong(second[2])).isGreaterThan(firstEpoch);

    // Its command ends by itself: the new leader resigns at once and passes the status on.
    Files.writeString(dir.resolve(standby + ".go"), "");
    assertThat(waiting.waitFor(TestTiming.millis(30_000).toMillis(), TimeUnit.MILLISECONDS))
        .isTrue();
    assertThat(waiting.exitValue()).isEqualTo(3);
    assertThat(dlock("status", election, "--json").out()).doesNotContain(election);
    assertThat(lines(terms)).hasSize(2);
  }

  @Test
  void badInputIsRefusedNamingTheOptionAndAFreeElectionElectsAtOnce() {
    assertUsage(dlock("run", "--elect", "", "--", "true"), "--elect");
    assertUsage(dlock("run", "--elect", "x", "--name", "x", "--", "true"), "--name");
    assertUsage(dlock("run", "--elect", "x", "--on-lost", "warn", "--", "true"), "--on-lost");
    assertUsage(dlock("run", "--", "true"), "--elect");
    // --wait 0 is one attempt: on a free election it leads, runs the command and resigns.
    Cli.Result once = dlock("run", "--elect", election, "--wait", "0", "--", "sh", "-c", "exit 4");
    assertThat(once.exit()).as(once.toString()).isEqualTo(4);
    assertThat(dlock("status", election, "--json").out()).doesNotContain(election);
  }

  /**
   * Starts a candidate whose command appends "WHO ELECTION EPOCH" to {@code terms}, then runs until
   * the file {@code WHO.go} exists and exits 3.
   */
  private Cli.Running candidate(String who, Path terms) {
    String script =
        "echo \"$1 $DLOCK_ELECTION $DLOCK_EPOCH\" >> '"
            + terms
            + "'; while [ ! -e '"
            + dir
            + "'/\"$1.go\" ]; do sleep 0.05; done; exit 3";
    Cli.Running run =
        cli.start(
            dir.resolve(who + ".out"),
            dir.resolve(who + ".err"),
            "run",
            "--backend",
            redis.uri(),
            "--elect",
            election,
            "--lease",
            "1s",
            "--",
            "sh",
            "-c",
            script,
            "sh",
            who);
    started.add(run);
    return run;
  }

  private Cli.Result dlock(String... args) {
    List<String> all = new ArrayList<>(List.of(args[0], "--backend", redis.uri()));
    all.addAll(List.of(args).subList(1, args.length));
    return cli.run(TestTiming.millis(60_000), all.toArray(new String[0]));
  }

  private static List<String> lines(Path file) throws IOException {
    return Files.exists(file) ? Files.readAllLines(file) : List.of();
  }

  private static void assertUsage(Cli.Result result, String mention) {
    assertThat(result.exit()).as(result.toString()).isEqualTo(ExitCodes.USAGE);
    assertThat(result.err().strip().lines()).as(result.err()).hasSize(1);
    assertThat(result.err()).contains(mention).doesNotContain("Exception");
  }
}
