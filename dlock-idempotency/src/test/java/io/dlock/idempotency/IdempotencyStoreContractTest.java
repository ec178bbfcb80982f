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

  // ---- repeats of one request (issue 14, item 2): a lost answer must not turn the caller's own
  // consumption or claim against its retry ----

  @Test
  void aConsumeRepeatedWithItsRequestIdIsToldConsumedAndAnotherRequestIsRefused() {
    TokenStore tokens = tokenStore(Duration.ofHours(1));
    IssuedToken token = tokens.issue(Duration.ofMinutes(1));
    String request = "order-form:" + UUID.randomUUID();
    // The first consume reached the store; its answer is taken to be lost.
    assertThat(tokens.consume(token.value(), request)).isEqualTo(TokenConsumption.CONSUMED);
    // The retry of the same request learns that it consumed the token.
    assertThat(tokens.consume(token.value(), request)).isEqualTo(TokenConsumption.CONSUMED);
    assertThat(tokens.consume(token.value(), request)).isEqualTo(TokenConsumption.CONSUMED);
    // Any other request is refused, with or without a request id of its own.
    assertThat(tokens.consume(token.value(), request + "-other"))
        .isEqualTo(TokenConsumption.ALREADY_CONSUMED);
    assertThat(tokens.consume(token.value())).isEqualTo(TokenConsumption.ALREADY_CONSUMED);
  }

  @Test
  void aRepeatedConsumeOfAnExpiredOrUnknownTokenStillSaysSo() throws Exception {
    TokenStore tokens = tokenStore(Duration.ofHours(1));
    String request = UUID.randomUUID().toString();
    assertThat(tokens.consume(Tokens.newToken(), request)).isEqualTo(TokenConsumption.UNKNOWN);
    Duration ttl = Duration.ofMillis(100);
    IssuedToken token = tokens.issue(ttl);
    // Lets the time to live pass on the server's clock (time passing is what is tested).
    TimeUnit.MILLISECONDS.sleep(ttl.toMillis() + TestTiming.millis(150).toMillis());
    assertThat(tokens.consume(token.value(), request)).isEqualTo(TokenConsumption.EXPIRED);
    assertThat(tokens.consume(token.value(), request)).isEqualTo(TokenConsumption.EXPIRED);
  }

  @Test
  void ofSixteenConcurrentRequestsEachRepeatedExactlyOneIsToldConsumedEveryTime() throws Exception {
    TokenStore tokens = tokenStore(Duration.ofHours(1));
    IssuedToken token = tokens.issue(Duration.ofMinutes(1));
    CountDownLatch start = new CountDownLatch(1);
    List<Future<List<TokenConsumption>>> answers = new ArrayList<>();
    for (int i = 0; i < CONSUMERS; i++) {
      String request = "request-" + i;
      answers.add(
          pool.submit(
              () -> {
                start.await();
                return List.of(
                    tokens.consume(token.value(), request), tokens.consume(token.value(), request));
              }));
    }
    start.countDown();
    List<List<TokenConsumption>> results = new ArrayList<>();
    for (Future<List<TokenConsumption>> answer : answers) {
      results.add(answer.get(TestTiming.millis(20_000).toMillis(), TimeUnit.MILLISECONDS));
    }
    assertThat(results)
        .containsOnlyOnce(List.of(TokenConsumption.CONSUMED, TokenConsumption.CONSUMED));
    assertThat(results)
        .filteredOn(r -> !r.contains(TokenConsumption.CONSUMED))
        .hasSize(CONSUMERS - 1)
        .allSatisfy(r -> assertThat(r).containsOnly(TokenConsumption.ALREADY_CONSUMED));
  }

  @Test
  void badRequestIdsAreRejectedNamingTheParameter() {
    TokenStore tokens = tokenStore(Duration.ofHours(1));
    DedupRecords records = DedupRecords.on(dedupStore());
    String token = tokens.issue(Duration.ofMinutes(1)).value();
    assertThatThrownBy(() -> tokens.consume(token, ""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("requestId must have 1 to 128 characters");
    assertThatThrownBy(() -> records.claim(uniqueKey("k"), "", "x".repeat(129)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("requestId");
    assertThatThrownBy(() -> records.firstTime(uniqueKey("k"), "a\nb"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("requestId must not contain control characters");
    // The token was not touched by the refused calls.
    assertThat(tokens.consume(token)).isEqualTo(TokenConsumption.CONSUMED);
  }

  @Test
  void aClaimRepeatedWithItsRequestIdOwnsTheClaimAndAnotherRequestIsInProgress() {
    ForwardingDedupStore store = new ForwardingDedupStore(dedupStore());
    DedupRecords records = DedupRecords.on(store);
    String key = uniqueKey("payment");
    String request = "delivery:" + UUID.randomUUID();
    // The first claim reaches the store; its answer is lost.
    store.loseNextClaimReply();
    assertThatThrownBy(() -> records.claim(key, "fp", request))
        .isInstanceOf(IdempotencyStoreException.class);
    // The retry of the same request owns the claim and can complete it.
    ClaimOutcome retry = records.claim(key, "fp", request);
    assertThat(retry).isInstanceOf(ClaimOutcome.Claimed.class);
    // Any other request is told the work is in progress, with or without a request id.
    assertThat(records.claim(key, "fp", request + "-other"))
        .isInstanceOf(ClaimOutcome.InProgress.class);
    assertThat(records.claim(key, "fp")).isInstanceOf(ClaimOutcome.InProgress.class);
    assertThat(records.claim(key, "fp-b", request))
        .isInstanceOf(ClaimOutcome.FingerprintMismatch.class);
    assertThat(((ClaimOutcome.Claimed) retry).claim().complete(bytes("done"))).isTrue();
    assertThat(records.claim(key, "fp", request))
        .isInstanceOfSatisfying(
            ClaimOutcome.Completed.class, c -> assertThat(c.result()).isEqualTo(bytes("done")));
    assertThat(records.claim(key, "fp", request + "-other"))
        .isInstanceOf(ClaimOutcome.Completed.class);
  }

  @Test
  void aRepeatedClaimStartsItsInProgressTimeoutAgain() {
    DedupStore store = dedupStore();
    String key = uniqueKey("timeout");
    String owner = Tokens.requestIdHash("request");
    assertThat(store.tryClaim(key, "", owner, Duration.ofSeconds(2)).kind())
        .isEqualTo(ClaimAttempt.Kind.CLAIMED);
    assertThat(store.tryClaim(key, "", owner, Duration.ofMinutes(10)).kind())
        .isEqualTo(ClaimAttempt.Kind.CLAIMED);
    assertThat(store.tryClaim(key, "", Tokens.newToken(), Duration.ofSeconds(2)).remaining())
        .isGreaterThan(Duration.ofMinutes(9));
  }

  @Test
  void aCompletionOrFailureRepeatedByItsOwnerIsToldItWorkedAndNoOtherOwnerIs() {
    DedupStore store = dedupStore();
    String key = uniqueKey("finish");
    String owner = Tokens.newToken();
    Duration timeout = Duration.ofMinutes(1);
    assertThat(store.tryClaim(key, "", owner, timeout).kind()).isEqualTo(ClaimAttempt.Kind.CLAIMED);
    assertThat(store.complete(key, owner, bytes("r"), Duration.ofHours(1))).isTrue();
    // The completion again (its answer lost): it worked, and changed nothing.
    assertThat(store.complete(key, owner, bytes("other"), Duration.ofHours(1))).isTrue();
    assertThat(store.complete(key, Tokens.newToken(), bytes("x"), Duration.ofHours(1))).isFalse();
    assertThat(store.fail(key, owner, Duration.ofHours(1))).isFalse();
    assertThat(store.tryClaim(key, "", Tokens.newToken(), timeout).result()).isEqualTo(bytes("r"));

    String failedKey = uniqueKey("fail");
    assertThat(store.tryClaim(failedKey, "", owner, timeout).kind())
        .isEqualTo(ClaimAttempt.Kind.CLAIMED);
    assertThat(store.fail(failedKey, owner, Duration.ofHours(1))).isTrue();
    assertThat(store.fail(failedKey, owner, Duration.ofHours(1))).isTrue();
    assertThat(store.complete(failedKey, owner, bytes("late"), Duration.ofHours(1))).isFalse();
    assertThat(store.fail(failedKey, Tokens.newToken(), Duration.ofHours(1))).isFalse();
  }

  @Test
  void firstTimeIsTrueForTheFirstRequestAndItsRepeatsOnly() {
    DedupRecords records = DedupRecords.on(dedupStore());
    String key = uniqueKey("message");
    String request = "delivery-" + UUID.randomUUID();
    assertThat(records.firstTime(key, request)).isTrue();
    // The first answer was lost: the redelivery of the same message is told it is the first.
    assertThat(records.firstTime(key, request)).isTrue();
    assertThat(records.firstTime(key, request + "-other")).isFalse();
    assertThat(records.firstTime(key)).isFalse();
  }

  @Test
  void runOnceRetriedWithItsRequestIdRunsTheActionIfItsClaimWasLostAndReplaysOtherwise() {
    ForwardingDedupStore store = new ForwardingDedupStore(dedupStore());
    DedupRecords records = DedupRecords.on(store);
    String key = uniqueKey("order");
    String request = "order-" + UUID.randomUUID();
    // A claim whose answer was lost: the action never ran.
    store.loseNextClaimReply();
    assertThatThrownBy(() -> records.runOnce(key, request, () -> "never"))
        .isInstanceOf(IdempotencyStoreException.class);
    AtomicInteger runs = new AtomicInteger();
    assertThat(records.runOnce(key, request + "-other", () -> "no " + runs.incrementAndGet()))
        .isInstanceOf(RunOnceResult.InProgress.class);
    assertThat(records.runOnce(key, request, () -> "placed " + runs.incrementAndGet()))
        .isEqualTo(new RunOnceResult.Executed<>("placed 1"));
    assertThat(records.runOnce(key, request, () -> "placed " + runs.incrementAndGet()))
        .isEqualTo(new RunOnceResult.Replayed<>("placed 1"));
    assertThat(runs).hasValue(1);
  }

  // ---- a retry of a request while its first attempt still runs (review of issue 14, item 2): the
  // store must not hand the running attempt's claim to the retry ----

  @Test
  void aRetryWithTheSameRequestIdWhileTheFirstAttemptRunsIsInProgressAndTheActionRunsOnce()
      throws Exception {
    DedupRecords records = DedupRecords.on(dedupStore());
    String key = uniqueKey("order");
    String request = "req-" + UUID.randomUUID();
    AtomicInteger runs = new AtomicInteger();
    CountDownLatch firstRuns = new CountDownLatch(1);
    CountDownLatch retryAnswered = new CountDownLatch(1);
    Future<RunOnceResult<String>> first =
        pool.submit(
            () ->
                records.runOnce(
                    key,
                    request,
                    () -> {
                      runs.incrementAndGet();
                      firstRuns.countDown();
                      // The first attempt holds its claim until the retry has been answered.
                      if (!retryAnswered.await(
                          TestTiming.millis(20_000).toMillis(), TimeUnit.MILLISECONDS)) {
                        throw new IllegalStateException("the retry was not answered");
                      }
                      return "placed by the first attempt";
                    }));
    assertThat(firstRuns.await(TestTiming.millis(20_000).toMillis(), TimeUnit.MILLISECONDS))
        .isTrue();
    // The caller gave up waiting (an upstream timeout) and retries its request, as it should.
    RunOnceResult<String> retry;
    try {
      retry = records.runOnce(key, request, () -> "placed by the retry " + runs.incrementAndGet());
    } finally {
      retryAnswered.countDown();
    }
    assertThat(retry).isInstanceOf(RunOnceResult.InProgress.class);
    assertThat(first.get(TestTiming.millis(20_000).toMillis(), TimeUnit.MILLISECONDS))
        .isEqualTo(new RunOnceResult.Executed<>("placed by the first attempt"));
    assertThat(runs).as("action runs").hasValue(1);
    assertThat(records.runOnce(key, request, () -> "again " + runs.incrementAndGet()))
        .isEqualTo(new RunOnceResult.Replayed<>("placed by the first attempt"));
  }

  @Test
  void aClaimRepeatedWithItsRequestIdAfterItsAnswerArrivedIsInProgressNotASecondOwner() {
    DedupRecords records = DedupRecords.on(dedupStore());
    String key = uniqueKey("payment");
    String request = "delivery:" + UUID.randomUUID();
    ClaimOutcome first = records.claim(key, "fp", request);
    assertThat(first).isInstanceOf(ClaimOutcome.Claimed.class);
    // Its caller was answered and may be doing the work: a repeat must not own the key too.
    assertThat(records.claim(key, "fp", request)).isInstanceOf(ClaimOutcome.InProgress.class);
    assertThat(((ClaimOutcome.Claimed) first).claim().complete(bytes("done"))).isTrue();
    assertThat(records.claim(key, "fp", request))
        .isInstanceOfSatisfying(
            ClaimOutcome.Completed.class, c -> assertThat(c.result()).isEqualTo(bytes("done")));
  }

  @Test
  void anAttemptWhoseClaimARetryTookOverBeforeItsAnswerArrivedDoesNotRun() {
    DedupStore raw = dedupStore();
    DedupRecords retries = DedupRecords.on(raw);
    String key = uniqueKey("order");
    String request = "req-" + UUID.randomUUID();
    AtomicInteger runs = new AtomicInteger();
    List<RunOnceResult<String>> retryResults = new ArrayList<>();
    // The first attempt's claim is made, and its answer is slow: meanwhile the caller retries.
    ForwardingDedupStore slowAnswer =
        new ForwardingDedupStore(raw) {
          private boolean first = true;

          @Override
          public ClaimAttempt tryClaim(
              String key, String fingerprint, String owner, Duration inProgressTimeout) {
            ClaimAttempt attempt = super.tryClaim(key, fingerprint, owner, inProgressTimeout);
            if (first) {
              first = false;
              retryResults.add(
                  retries.runOnce(
                      key, request, () -> "placed by the retry " + runs.incrementAndGet()));
            }
            return attempt;
          }
        };
    RunOnceResult<String> late =
        DedupRecords.on(slowAnswer)
            .runOnce(key, request, () -> "placed late " + runs.incrementAndGet());
    assertThat(retryResults).containsExactly(new RunOnceResult.Executed<>("placed by the retry 1"));
    assertThat(late).isInstanceOf(RunOnceResult.InProgress.class);
    assertThat(runs).as("action runs").hasValue(1);
  }

  @Test
  void aClaimWhoseConfirmationAnswersAreAllLostDoesNotRunAndItsRetryClaimsTheKeyAgain() {
    ForwardingDedupStore store = new ForwardingDedupStore(dedupStore());
    DedupRecords records = DedupRecords.on(store);
    String key = uniqueKey("order");
    String request = "req-" + UUID.randomUUID();
    AtomicInteger runs = new AtomicInteger();
    // The claim is confirmed on the store, but the caller never learns it, however often it
    // repeats the confirmation: it must not run, and it gives the claim back so that its retry
    // need not wait for the in-progress timeout.
    store.loseConfirmationReplies(Integer.MAX_VALUE);
    assertThatThrownBy(() -> records.runOnce(key, request, () -> "first " + runs.incrementAndGet()))
        .isInstanceOf(IdempotencyStoreException.class)
        .hasMessageContaining("confirmation");
    assertThat(runs).hasValue(0);
    assertThat(store.confirmations()).isBetween(2, DedupRecords.STORE_CALL_TRIES);
    store.loseConfirmationReplies(0);
    assertThat(records.runOnce(key, request, () -> "placed " + runs.incrementAndGet()))
        .isEqualTo(new RunOnceResult.Executed<>("placed 1"));
    assertThat(records.runOnce(key, request, () -> "again " + runs.incrementAndGet()))
        .isEqualTo(new RunOnceResult.Replayed<>("placed 1"));
  }

  // ---- liveness under lost replies (the dropped-replies fault run found keys left in progress
  // when a confirmation's answer and its give-back's were both lost): the attempt repeats its own
  // confirmation and give-back ----

  @Test
  void aConfirmationWhoseAnswerIsLostOnceIsRepeatedAndTheActionRunsOnceWithinTheSameCall() {
    ForwardingDedupStore store = new ForwardingDedupStore(dedupStore());
    DedupRecords records = DedupRecords.on(store);
    String key = uniqueKey("order");
    String request = "req-" + UUID.randomUUID();
    AtomicInteger runs = new AtomicInteger();
    store.loseNextConfirmationReply();
    assertThat(records.runOnce(key, request, () -> "placed " + runs.incrementAndGet()))
        .as("the caller is told the result of the one execution")
        .isEqualTo(new RunOnceResult.Executed<>("placed 1"));
    assertThat(store.confirmations()).as("the confirmation and its repeat").isEqualTo(2);
    assertThat(records.runOnce(key, request, () -> "again " + runs.incrementAndGet()))
        .isEqualTo(new RunOnceResult.Replayed<>("placed 1"));
    assertThat(runs).as("action runs").hasValue(1);

    // The same through claim(): the caller gets the claim, and no other request does.
    String claimedKey = uniqueKey("payment");
    store.loseNextConfirmationReply();
    ClaimOutcome claimed = records.claim(claimedKey, "fp", request);
    assertThat(claimed).isInstanceOf(ClaimOutcome.Claimed.class);
    assertThat(records.claim(claimedKey, "fp", request))
        .as("a later attempt of the request, while the first works")
        .isInstanceOf(ClaimOutcome.InProgress.class);
    assertThat(((ClaimOutcome.Claimed) claimed).claim().complete(bytes("done"))).isTrue();

    // The store's confirmation itself: repeated by its attempt it answers CLAIMED again; it never
    // confirms another attempt's claim.
    DedupStore raw = dedupStore();
    String rawKey = uniqueKey("confirm");
    ClaimOwner owner = ClaimOwner.newAttempt(Tokens.requestIdHash(request));
    Duration timeout = Duration.ofMinutes(1);
    assertThat(raw.tryClaim(rawKey, "", owner.toString(), timeout).kind())
        .isEqualTo(ClaimAttempt.Kind.CLAIMED);
    assertThat(raw.confirm(rawKey, "", owner.toString(), timeout).kind())
        .isEqualTo(ClaimAttempt.Kind.CLAIMED);
    assertThat(raw.confirm(rawKey, "", owner.toString(), timeout).kind())
        .as("the same attempt's confirmation, repeated")
        .isEqualTo(ClaimAttempt.Kind.CLAIMED);
    ClaimOwner other = ClaimOwner.newAttempt(owner.request());
    assertThat(raw.confirm(rawKey, "", other.toString(), timeout).kind())
        .isEqualTo(ClaimAttempt.Kind.IN_PROGRESS);
  }

  @Test
  void aGiveBackThatFailsOnceIsRepeatedAndTheRetryClaimsTheKey() {
    ForwardingDedupStore store = new ForwardingDedupStore(dedupStore());
    DedupRecords records = DedupRecords.on(store);
    String key = uniqueKey("order");
    String request = "req-" + UUID.randomUUID();
    AtomicInteger runs = new AtomicInteger();
    // Every confirmation answer is lost (the claim is confirmed on the store), and the first
    // give-back never reaches the store (sent while the connection is down): its repeat must still
    // free the key for the retry, which would otherwise be in progress until the timeout.
    store.loseConfirmationReplies(Integer.MAX_VALUE).refuseFails(1);
    assertThatThrownBy(() -> records.runOnce(key, request, () -> "first " + runs.incrementAndGet()))
        .isInstanceOf(IdempotencyStoreException.class)
        .hasMessageContaining("confirmation");
    assertThat(runs).hasValue(0);
    store.loseConfirmationReplies(0);
    assertThat(records.runOnce(key, request, () -> "placed " + runs.incrementAndGet()))
        .as("the retry, at once")
        .isEqualTo(new RunOnceResult.Executed<>("placed 1"));
    assertThat(store.failures()).as("the give-back and its repeat").isEqualTo(2);
    assertThat(records.runOnce(key, request + "-other", () -> "other " + runs.incrementAndGet()))
        .isEqualTo(new RunOnceResult.Replayed<>("placed 1"));
    assertThat(runs).as("action runs").hasValue(1);
  }

  @Test
  void onASilentStoreTheRepeatsStopWithinTheirWindowInsteadOfWaitingOutEveryTry() {
    // Each confirmation reaches the store but fails only after a command timeout of 400 ms
    // (simulated): repeating it nine times would hold the caller 3.6 s and more.
    Duration commandTimeout = Duration.ofMillis(400);
    ForwardingDedupStore store =
        new ForwardingDedupStore(dedupStore()) {
          @Override
          public ClaimAttempt tryClaim(
              String key, String fingerprint, String owner, Duration inProgressTimeout) {
            ClaimAttempt attempt = super.tryClaim(key, fingerprint, owner, inProgressTimeout);
            if (ClaimOwner.parse(owner).confirmation()) {
              try {
                Thread.sleep(commandTimeout.toMillis()); // the store's silence, not a sync
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              throw new IdempotencyStoreException("test: the confirmation timed out", null);
            }
            return attempt;
          }
        };
    DedupRecords records = DedupRecords.on(store);
    AtomicInteger runs = new AtomicInteger();
    String key = uniqueKey("order");
    String request = "req-" + UUID.randomUUID();
    assertThatThrownBy(() -> records.runOnce(key, request, () -> "" + runs.incrementAndGet()))
        .isInstanceOf(IdempotencyStoreException.class)
        .hasMessageContaining("timed out");
    assertThat(runs).hasValue(0);
    // Tries: the first, and the repeats that start within the 600 ms window after its failure
    // (at most two more after 400 ms failures), not nine.
    assertThat(store.confirmations()).isBetween(2, 3);
  }

  @Test
  void runOnceWhoseCompletionFailsOnceRepeatsItAndTheActionRunsOnce() {
    ForwardingDedupStore store = new ForwardingDedupStore(dedupStore());
    DedupRecords records = DedupRecords.on(store);
    String key = uniqueKey("order");
    String request = "req-" + UUID.randomUUID();
    AtomicInteger runs = new AtomicInteger();
    // The action ran; its completion is sent while the connection is down. Failing the claim now
    // would let the retry run the action a second time.
    store.refuseCompletions(1);
    assertThat(records.runOnce(key, request, () -> "placed " + runs.incrementAndGet()))
        .isEqualTo(new RunOnceResult.Executed<>("placed 1"));
    assertThat(records.runOnce(key, request, () -> "again " + runs.incrementAndGet()))
        .isEqualTo(new RunOnceResult.Replayed<>("placed 1"));
    assertThat(runs).as("action runs").hasValue(1);
  }

  @Test
  void firstTimeIsFalseWhenItsClaimExpiredAndAnotherRequestCompletedTheKeyFirst() {
    DedupStore raw = dedupStore();
    DedupRecords others = DedupRecords.on(raw).withInProgressTimeout(DedupRecords.MIN_DURATION);
    List<Boolean> otherAnswers = new ArrayList<>();
    // Before each completion reaches the store, the claim's in-progress timeout passes on the
    // store's clock and another request takes the key over and completes it.
    ForwardingDedupStore lateCompletion =
        new ForwardingDedupStore(raw) {
          @Override
          public boolean complete(String key, String owner, byte[] result, Duration retention) {
            await()
                .atMost(TestTiming.millis(20_000))
                .pollInterval(Duration.ofMillis(50))
                .until(() -> others.firstTime(key, "request-b"));
            otherAnswers.add(true);
            return super.complete(key, owner, result, retention);
          }
        };
    DedupRecords records =
        DedupRecords.on(lateCompletion).withInProgressTimeout(DedupRecords.MIN_DURATION);

    String key = uniqueKey("message");
    assertThat(records.firstTime(key, "request-a")).as("request a, completed late").isFalse();
    assertThat(others.firstTime(key, "request-b")).as("request b's repeat").isTrue();
    assertThat(others.firstTime(key, "request-a")).as("request a's repeat").isFalse();

    String keyWithoutRequestIds = uniqueKey("message");
    assertThat(records.firstTime(keyWithoutRequestIds)).as("completed late").isFalse();
    assertThat(others.firstTime(keyWithoutRequestIds)).isFalse();
    assertThat(otherAnswers).hasSize(2);
  }

  static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
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
