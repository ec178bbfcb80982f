package io.dlock.idempotency;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.idempotency.redis.RedisIdempotency;
import io.dlock.idempotency.redis.RedisIdempotencySettings;
import io.dlock.testkit.TestTiming;
import io.dlock.testkit.net.TcpProxy;
import io.dlock.testkit.server.RedisServerProcess;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Real lost replies on Redis: a proxy passes a consume, claim or completion script on to the
 * server, throws its answer away and resets or closes the connection. The call throws (the store
 * rejects commands while disconnected, so Lettuce does not re-send it), the server has run it, and
 * the caller retries with the same request id once reconnected: the retry must get the first call's
 * outcome, not be told that its own consumption or claim was someone else's. (A client that
 * re-sends by itself is {@code redis.RedisScriptReplayTest}.)
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisLostReplyTest {
  private static RedisServerProcess server;
  private TcpProxy proxy;
  private RedisIdempotency redis;

  @BeforeAll
  static void startServer() {
    server = RedisServerProcess.start();
  }

  @AfterAll
  static void stopServer() {
    if (server != null) {
      server.close();
    }
  }

  @BeforeEach
  void connectThroughTheProxy() {
    proxy = new TcpProxy(new InetSocketAddress("127.0.0.1", server.port()));
    redis =
        RedisIdempotency.connect(
            RedisIdempotencySettings.of("redis://127.0.0.1:" + proxy.port())
                .withCommandTimeout(TestTiming.millis(5_000)));
  }

  @AfterEach
  void close() {
    if (redis != null) {
      redis.close();
    }
    if (proxy != null) {
      proxy.close();
    }
  }

  @ParameterizedTest(name = "connection {0}")
  @ValueSource(strings = {"reset", "closed"})
  void aConsumeWhoseReplyWasLostIsToldConsumedOnItsRetryAndAnotherRequestIsRefused(String end) {
    TokenStore tokens = redis.tokenStore();
    loadScripts(tokens);
    IssuedToken token = tokens.issue(Duration.ofMinutes(1));
    String request = "order-form-" + UUID.randomUUID();

    proxy.dropNextReply(end.equals("reset"));
    assertThatThrownBy(() -> tokens.consume(token.value(), request))
        .isInstanceOf(IdempotencyStoreException.class);
    assertThat(proxy.droppedReplies()).as("replies lost").isEqualTo(1);

    assertThat(retried(() -> tokens.consume(token.value(), request)))
        .isEqualTo(TokenConsumption.CONSUMED);
    assertThat(tokens.consume(token.value(), request + "-other"))
        .isEqualTo(TokenConsumption.ALREADY_CONSUMED);
    assertThat(tokens.consume(token.value())).isEqualTo(TokenConsumption.ALREADY_CONSUMED);
  }

  @ParameterizedTest(name = "connection {0}")
  @ValueSource(strings = {"reset", "closed"})
  void aClaimWhoseReplyWasLostIsOwnedByItsRetryAndAnotherRequestIsInProgress(String end) {
    DedupRecords records = DedupRecords.on(redis.dedupStore());
    String key = IdempotencyStoreContractTest.uniqueKey("lost-claim");
    String request = "delivery-" + UUID.randomUUID();
    loadScripts(records);

    proxy.dropNextReply(end.equals("reset"));
    assertThatThrownBy(() -> records.claim(key, "fp", request))
        .isInstanceOf(IdempotencyStoreException.class);
    assertThat(proxy.droppedReplies()).as("replies lost").isEqualTo(1);

    ClaimOutcome retry = retried(() -> records.claim(key, "fp", request));
    assertThat(retry).isInstanceOf(ClaimOutcome.Claimed.class);
    assertThat(records.claim(key, "fp", request + "-other"))
        .isInstanceOf(ClaimOutcome.InProgress.class);
    assertThat(((ClaimOutcome.Claimed) retry).claim().complete(new byte[] {1})).isTrue();
    assertThat(records.claim(key, "fp", request + "-other"))
        .isInstanceOf(ClaimOutcome.Completed.class);
  }

  @ParameterizedTest(name = "connection {0}")
  @ValueSource(strings = {"reset", "closed"})
  void aCompletionWhoseReplyWasLostIsToldDoneOnItsRetry(String end) {
    DedupRecords records = DedupRecords.on(redis.dedupStore());
    String key = IdempotencyStoreContractTest.uniqueKey("lost-complete");
    loadScripts(records);
    DedupClaim claim = ((ClaimOutcome.Claimed) records.claim(key, "fp")).claim();

    proxy.dropNextReply(end.equals("reset"));
    assertThatThrownBy(() -> claim.complete(new byte[] {7}))
        .isInstanceOf(IdempotencyStoreException.class);
    assertThat(proxy.droppedReplies()).as("replies lost").isEqualTo(1);

    assertThat(retried(() -> claim.complete(new byte[] {7}))).isTrue();
    assertThat(records.claim(key, "fp"))
        .isInstanceOfSatisfying(
            ClaimOutcome.Completed.class, c -> assertThat(c.result()).containsExactly(7));
  }

  @Test
  void firstTimeWhoseClaimReplyWasLostIsTrueOnItsRetryOnly() {
    DedupRecords records = DedupRecords.on(redis.dedupStore());
    String key = IdempotencyStoreContractTest.uniqueKey("lost-first-time");
    String request = "message-" + UUID.randomUUID();
    loadScripts(records);
    proxy.dropNextReply(true);
    assertThatThrownBy(() -> records.firstTime(key, request))
        .isInstanceOf(IdempotencyStoreException.class);
    assertThat(proxy.droppedReplies()).as("replies lost").isEqualTo(1);

    assertThat(retried(() -> records.firstTime(key, request))).isTrue();
    assertThat(records.firstTime(key, request + "-other")).isFalse();
  }

  /**
   * Repeats {@code call} while it fails because the client is still reconnecting, as a caller
   * retrying a call whose outcome it did not learn would.
   */
  private static <T> T retried(Callable<T> call) {
    AtomicReference<T> answer = new AtomicReference<>();
    await()
        .atMost(TestTiming.millis(20_000))
        .pollInterval(Duration.ofMillis(20))
        .ignoreException(IdempotencyStoreException.class)
        .until(
            () -> {
              answer.set(call.call());
              return true;
            });
    return answer.get();
  }

  /**
   * Runs each script once, so that the server knows it: a NOSCRIPT answer dropped would make the
   * script run only once, and the test could not fail.
   */
  private static void loadScripts(TokenStore tokens) {
    assertThat(tokens.consume(Tokens.newToken())).isEqualTo(TokenConsumption.UNKNOWN);
  }

  private static void loadScripts(DedupRecords records) {
    ClaimOutcome warmUp = records.claim(IdempotencyStoreContractTest.uniqueKey("warm-up"), "");
    assertThat(((ClaimOutcome.Claimed) warmUp).claim().complete(new byte[0])).isTrue();
  }
}
