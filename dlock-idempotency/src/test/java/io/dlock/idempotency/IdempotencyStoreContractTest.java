package io.dlock.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.testkit.TestTiming;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What every token and dedup store must do, run against real servers by one subclass per backend.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
abstract class IdempotencyStoreContractTest {
  private static final int CONSUMERS = 16;

  private final ExecutorService pool = Executors.newFixedThreadPool(CONSUMERS);

  /** A token store with this tombstone retention. */
  abstract TokenStore tokenStore(Duration retention);

  abstract DedupStore dedupStore();

  /** The arguments of {@link CrashingClaimant} for this backend, before the key and timeout. */
  abstract List<String> crashingClaimantArgs();

  @AfterEach
  void stopPool() {
    pool.shutdownNow();
  }

  static String uniqueKey(String what) {
    return what + ":" + UUID.randomUUID();
  }

  // ---- tokens ----

  @Test
  void aTokenIsConsumedOnceAndThenReportedAsConsumed() {
    TokenStore tokens = tokenStore(Duration.ofHours(1));
    IssuedToken token = tokens.issue(Duration.ofMinutes(1));
    assertThat(token.value()).hasSizeGreaterThanOrEqualTo(22); // at least 128 bits in base64url
    assertThat(tokens.consume(token.value())).isEqualTo(TokenConsumption.CONSUMED);
    assertThat(tokens.consume(token.value())).isEqualTo(TokenConsumption.ALREADY_CONSUMED);
    assertThat(tokens.consume(token.value())).isEqualTo(TokenConsumption.ALREADY_CONSUMED);
  }

  @Test
  void aTokenNeverIssuedIsUnknown() {
    TokenStore tokens = tokenStore(Duration.ofHours(1));
    assertThat(tokens.consume(Tokens.newToken())).isEqualTo(TokenConsumption.UNKNOWN);
    assertThat(tokens.consume("")).isEqualTo(TokenConsumption.UNKNOWN);
  }

  @Test
  void aTokenPastItsTimeToLiveIsExpiredAndCannotBeConsumed() throws Exception {
    TokenStore tokens = tokenStore(Duration.ofHours(1));
    Duration ttl = Duration.ofMillis(100);
    IssuedToken token = tokens.issue(ttl);
    // Lets the time to live pass on the server's clock: the passing of time is what is tested here,
    // no other thread is awaited.
    TimeUnit.MILLISECONDS.sleep(ttl.toMillis() + TestTiming.millis(150).toMillis());
    assertThat(tokens.consume(token.value())).isEqualTo(TokenConsumption.EXPIRED);
    assertThat(tokens.consume(token.value())).isEqualTo(TokenConsumption.EXPIRED);
  }

  @Test
  void aConsumedTokenIsForgottenAfterTheRetention() throws Exception {
    Duration retention = Duration.ofMillis(200);
    TokenStore tokens = tokenStore(retention);
    IssuedToken token = tokens.issue(Duration.ofMinutes(1));
    assertThat(tokens.consume(token.value())).isEqualTo(TokenConsumption.CONSUMED);
    assertThat(tokens.consume(token.value())).isEqualTo(TokenConsumption.ALREADY_CONSUMED);
    // Lets the retention pass on the server's clock (time passing is what is tested).
    TimeUnit.MILLISECONDS.sleep(retention.toMillis() + TestTiming.millis(150).toMillis());
    assertThat(tokens.consume(token.value())).isEqualTo(TokenConsumption.UNKNOWN);
  }

  @Test
  void ofSixteenConcurrentConsumersOfOneTokenExactlyOneWins() throws Exception {
    TokenStore tokens = tokenStore(Duration.ofHours(1));
    for (int round = 0; round < 10; round++) {
      IssuedToken token = tokens.issue(Duration.ofMinutes(1));
      CountDownLatch start = new CountDownLatch(1);
      List<Future<TokenConsumption>> answers = new ArrayList<>();
      for (int i = 0; i < CONSUMERS; i++) {
        answers.add(
            pool.submit(
                () -> {
                  start.await();
                  return tokens.consume(token.value());
                }));
      }
      start.countDown();
      List<TokenConsumption> results = new ArrayList<>();
      for (Future<TokenConsumption> answer : answers) {
        results.add(answer.get(TestTiming.millis(20_000).toMillis(), TimeUnit.MILLISECONDS));
      }
      assertThat(results).filteredOn(r -> r == TokenConsumption.CONSUMED).hasSize(1);
      assertThat(results)
          .filteredOn(r -> r == TokenConsumption.ALREADY_CONSUMED)
          .hasSize(CONSUMERS - 1);
    }
  }

  @Test
  void aTimeToLiveOutOfRangeIsRejectedNamingTheParameter() {
    TokenStore tokens = tokenStore(Duration.ofHours(1));
    assertThatThrownBy(() -> tokens.issue(Duration.ofMillis(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("timeToLive must be from");
    assertThatThrownBy(() -> tokens.issue(Duration.ofDays(31)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("timeToLive");
  }

  // ---- dedup records ----

  @Test
  void runOnceRunsTheActionOnceAndReplaysItsStoredResult() {
    DedupRecords records = DedupRecords.on(dedupStore());
    String key = uniqueKey("order");
    AtomicInteger runs = new AtomicInteger();
    RunOnceResult<String> first =
        records.runOnce(key, () -> "receipt-" + runs.incrementAndGet() + " ✓");
    RunOnceResult<String> second =
        records.runOnce(key, () -> "receipt-" + runs.incrementAndGet() + " ✓");
    assertThat(first).isEqualTo(new RunOnceResult.Executed<>("receipt-1 ✓"));
    assertThat(second).isEqualTo(new RunOnceResult.Replayed<>("receipt-1 ✓"));
    assertThat(runs).hasValue(1);
  }

  @Test
  void binaryResultsRoundTrip() {
    DedupRecords records = DedupRecords.on(dedupStore());
    String key = uniqueKey("bytes");
    byte[] bytes = {0, (byte) 0xff, 10, 13, 0x7f, (byte) 0x80};
    records.runOnce(key, ResultCodec.BYTES, () -> bytes);
    RunOnceResult<byte[]> replay = records.runOnce(key, ResultCodec.BYTES, () -> new byte[0]);
    assertThat(replay).isInstanceOf(RunOnceResult.Replayed.class);
    assertThat(replay.value()).get().isEqualTo(bytes);
  }

  @Test
  void firstTimeIsTrueOnlyOnce() {
    DedupRecords records = DedupRecords.on(dedupStore());
    String key = uniqueKey("message");
    assertThat(records.firstTime(key)).isTrue();
    assertThat(records.firstTime(key)).isFalse();
    assertThat(records.firstTime(key)).isFalse();
  }

  @Test
  void concurrentCallersWhileTheActionRunsGetInProgressNotASecondExecution() throws Exception {
    DedupRecords records = DedupRecords.on(dedupStore());
    String key = uniqueKey("payment");
    AtomicInteger runs = new AtomicInteger();
    int callers = CONSUMERS;
    CountDownLatch start = new CountDownLatch(1);
    CountDownLatch othersAnswered = new CountDownLatch(callers - 1);
    List<Future<RunOnceResult<String>>> answers = new ArrayList<>();
    for (int i = 0; i < callers; i++) {
      answers.add(
          pool.submit(
              () -> {
                start.await();
                RunOnceResult<String> result =
                    records.runOnce(
                        key,
                        () -> {
                          runs.incrementAndGet();
                          // The action holds its claim until every other caller has been answered.
                          if (!othersAnswered.await(
                              TestTiming.millis(20_000).toMillis(), TimeUnit.MILLISECONDS)) {
                            throw new IllegalStateException("the other callers did not answer");
                          }
                          return "paid";
                        });
                if (result instanceof RunOnceResult.InProgress) {
                  othersAnswered.countDown();
                }
                return result;
              }));
    }
    start.countDown();
    List<RunOnceResult<String>> results = new ArrayList<>();
    for (Future<RunOnceResult<String>> answer : answers) {
      results.add(answer.get(TestTiming.millis(30_000).toMillis(), TimeUnit.MILLISECONDS));
    }
    assertThat(runs).hasValue(1);
    assertThat(results).containsOnlyOnce(new RunOnceResult.Executed<>("paid"));
    assertThat(results)
        .filteredOn(r -> r instanceof RunOnceResult.InProgress)
        .hasSize(callers - 1)
        .allSatisfy(
            r ->
                assertThat(((RunOnceResult.InProgress<String>) r).retryAfter())
                    .isPositive()
                    .isLessThanOrEqualTo(records.inProgressTimeout()));
    assertThat(records.runOnce(key, () -> "again")).isEqualTo(new RunOnceResult.Replayed<>("paid"));
  }

  @Test
  void aFailedActionMarksTheRecordFailedAndTheNextCallRunsItAgain() {
    DedupRecords records = DedupRecords.on(dedupStore());
    String key = uniqueKey("flaky");
    AtomicInteger runs = new AtomicInteger();
    assertThatThrownBy(
            () ->
                records.runOnce(
                    key,
                    () -> {
                      runs.incrementAndGet();
                      throw new IllegalStateException("payment gateway down");
                    }))
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("payment gateway down");
    assertThatThrownBy(
            () ->
                records.runOnce(
                    key,
                    () -> {
                      runs.incrementAndGet();
                      throw new java.io.IOException("timeout");
                    }))
        .isInstanceOf(IdempotentActionException.class)
        .hasCauseInstanceOf(java.io.IOException.class);
    RunOnceResult<String> third = records.runOnce(key, () -> "ok after " + runs.incrementAndGet());
    assertThat(third).isEqualTo(new RunOnceResult.Executed<>("ok after 3"));
    assertThat(records.runOnce(key, () -> "no"))
        .isEqualTo(new RunOnceResult.Replayed<>("ok after 3"));
  }

  @Test
  void aRecordMadeForAnotherFingerprintIsAMismatch() {
    DedupRecords records = DedupRecords.on(dedupStore());
    String key = uniqueKey("request");
    ClaimOutcome first = records.claim(key, "fp-a");
    assertThat(first).isInstanceOf(ClaimOutcome.Claimed.class);
    assertThat(records.claim(key, "fp-b")).isInstanceOf(ClaimOutcome.FingerprintMismatch.class);
    assertThat(records.claim(key, "fp-a")).isInstanceOf(ClaimOutcome.InProgress.class);
    assertThat(
            ((ClaimOutcome.Claimed) first)
                .claim()
                .complete("done".getBytes(StandardCharsets.UTF_8)))
        .isTrue();
    assertThat(records.claim(key, "fp-b")).isInstanceOf(ClaimOutcome.FingerprintMismatch.class);
    assertThat(records.claim(key, "fp-a")).isInstanceOf(ClaimOutcome.Completed.class);
  }

  @Test
  void aCompletedRecordIsForgottenAfterItsRetention() throws Exception {
    Duration retention = Duration.ofMillis(300);
    DedupRecords records = DedupRecords.on(dedupStore()).withRetention(retention);
    String key = uniqueKey("short");
    assertThat(records.firstTime(key)).isTrue();
    assertThat(records.firstTime(key)).isFalse();
    // Lets the retention pass on the server's clock (time passing is what is tested).
    TimeUnit.MILLISECONDS.sleep(retention.toMillis() + TestTiming.millis(150).toMillis());
    assertThat(records.firstTime(key)).isTrue();
  }

  @Test
  void aClaimantKilledMidActionBlocksOthersUntilItsRecordExpiresThenTheWorkRunsOnce()
      throws Exception {
    String key = uniqueKey("crash");
    Duration timeout = TestTiming.millis(2_000);
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-XX:TieredStopAtLevel=1");
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(CrashingClaimant.class.getName());
    command.addAll(crashingClaimantArgs());
    command.add(key);
    command.add(Long.toString(timeout.toMillis()));
    Process child =
        new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    try {
      BufferedReader out =
          new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
      String line = out.readLine();
      assertThat(line).as("the claimant's first line").isEqualTo("STARTED");

      DedupRecords records = DedupRecords.on(dedupStore());
      AtomicInteger runs = new AtomicInteger();
      assertThat(records.runOnce(key, () -> "second " + runs.incrementAndGet()))
          .isInstanceOf(RunOnceResult.InProgress.class);

      child.destroyForcibly(); // SIGKILL: no finally block, no shutdown hook runs
      assertThat(child.waitFor(TestTiming.millis(10_000).toMillis(), TimeUnit.MILLISECONDS))
          .isTrue();

      // Still in progress right after the crash: the record blocks until its timeout.
      assertThat(records.runOnce(key, () -> "second " + runs.incrementAndGet()))
          .isInstanceOf(RunOnceResult.InProgress.class);
      await()
          .atMost(timeout.plus(TestTiming.millis(10_000)))
          .pollInterval(Duration.ofMillis(100))
          .until(
              () ->
                  records.runOnce(key, () -> "second " + runs.incrementAndGet())
                      instanceof RunOnceResult.Executed);
      assertThat(runs).hasValue(1);
      assertThat(records.runOnce(key, () -> "third"))
          .isEqualTo(new RunOnceResult.Replayed<>("second 1"));
    } finally {
      child.destroyForcibly();
    }
  }

  @Test
  void badKeysAndSettingsAreRejectedNamingTheParameter() {
    DedupRecords records = DedupRecords.on(dedupStore());
    assertThatThrownBy(() -> records.firstTime(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("key must have 1 to 200 characters");
    assertThatThrownBy(() -> records.firstTime("x".repeat(201)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("key");
    assertThatThrownBy(() -> records.firstTime("a\nb"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("control characters");
    assertThatThrownBy(() -> records.withInProgressTimeout(Duration.ofMillis(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("inProgressTimeout must be from");
    assertThatThrownBy(() -> records.withRetention(Duration.ofDays(401)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("retention must be from");
  }
}
