package io.dlock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.testkit.TestTiming;
import io.dlock.testkit.server.RedisServerProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code dlock run --permits N --name X} (issue 31): at most N copies of the command run at once; a
 * copy that ends lets the next waiting one start; {@code dlock status --semaphore} lists the
 * permits and {@code dlock release --force --permit} breaks one, which stops its command (76).
 * Driven in process on one redis-server; the semaphore itself is proven on every backend by the
 * contract kit's {@code SemaphoreContract}.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class PermitsCliTest {
  private static RedisServerProcess redis;

  private final Cli cli = new InProcessCli();
  private final List<Cli.Running> started = new ArrayList<>();
  private final String semaphore = "permits-" + UUID.randomUUID().toString().substring(0, 8);
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
  void atMostNCopiesRunAndAnEndedOneLetsTheNextStart() throws Exception {
    Path runs = dir.resolve("runs");
    Cli.Running a = copy("a", runs);
    Cli.Running b = copy("b", runs);
    Cli.Running c = copy("c", runs);
    await().atMost(TestTiming.millis(30_000)).until(() -> lines(runs).size() == 2);
    String status = dlock("status", "--semaphore", semaphore, "--json").out();
    assertThat(tokens(status)).as(status).hasSize(2);
    List<String> first = lines(runs);
    String waiting =
        List.of("a", "b", "c").stream()
            .filter(w -> first.stream().noneMatch(l -> l.startsWith(w + " ")))
            .findFirst()
            .orElseThrow();
    Cli.Running waitingRun = waiting.equals("a") ? a : waiting.equals("b") ? b : c;
    assertThat(waitingRun.waitFor(0, TimeUnit.MILLISECONDS)).as("the third copy waits").isFalse();

    // One copy ends by itself: its permit goes to the waiting one.
    String ending = first.get(0).split(" ")[0];
    Cli.Running endingRun = ending.equals("a") ? a : ending.equals("b") ? b : c;
    Files.writeString(dir.resolve(ending + ".go"), "");
    assertThat(endingRun.waitFor(TestTiming.millis(30_000).toMillis(), TimeUnit.MILLISECONDS))
        .isTrue();
    assertThat(endingRun.exitValue()).isEqualTo(3);
    await().atMost(TestTiming.millis(30_000)).until(() -> lines(runs).size() == 3);
    assertThat(lines(runs).get(2)).startsWith(waiting + " " + semaphore + " ");

    // An operator breaks the newest permit: its command is stopped, the lease lost (76).
    long newest = Long.parseLong(lines(runs).get(2).split(" ")[2]);
    Cli.Result broken =
        dlock("release", "--force", "--yes", "--permit", Long.toString(newest), semaphore);
    assertThat(broken.exit()).as(broken.toString()).isZero();
    assertThat(broken.out()).contains("permit " + newest + " of semaphore '" + semaphore + "'");
    assertThat(waitingRun.waitFor(TestTiming.millis(30_000).toMillis(), TimeUnit.MILLISECONDS))
        .isTrue();
    assertThat(waitingRun.exitValue()).isEqualTo(ExitCodes.LEASE_LOST);
    String after = dlock("status", "--semaphore", semaphore, "--json").out();
    assertThat(tokens(after)).as(after).hasSize(1).doesNotContain(newest);
  }

  @Test
  void badInputIsRefusedNamingTheOption() {
    assertUsage(dlock("run", "--name", semaphore, "--permits", "0", "--", "true"), "--permits");
    assertUsage(dlock("run", "--elect", semaphore, "--permits", "2", "--", "true"), "--permits");
    // --wait 0 is one attempt: a free permit runs the command and is given back.
    Cli.Result once =
        dlock(
            "run",
            "--name",
            semaphore,
            "--permits",
            "1",
            "--wait",
            "0",
            "--",
            "sh",
            "-c",
            "exit 4");
    assertThat(once.exit()).as(once.toString()).isEqualTo(4);
    assertThat(tokens(dlock("status", "--semaphore", semaphore, "--json").out())).isEmpty();
  }

  private static List<Long> tokens(String json) {
    List<Long> tokens = new ArrayList<>();
    Matcher m = Pattern.compile("\"fencingToken\":(\\d+)").matcher(json);
    while (m.find()) {
      tokens.add(Long.parseLong(m.group(1)));
    }
    return tokens;
  }

  /**
   * Starts a copy whose command appends "WHO NAME TOKEN" to {@code runs}, then runs until the file
   * {@code WHO.go} exists and exits 3.
   */
  private Cli.Running copy(String who, Path runs) {
    String script =
        "echo \"$1 $DLOCK_NAME $DLOCK_FENCING_TOKEN\" >> '"
            + runs
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
            "--name",
            semaphore,
            "--permits",
            "2",
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
    assertThat(result.err()).contains(mention);
  }
}
