package io.dlock.idempotency.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.idempotency.ClaimAttempt;
import io.dlock.idempotency.DedupRecords;
import io.dlock.idempotency.DedupStore;
import io.dlock.idempotency.IdempotencyStoreException;
import io.dlock.idempotency.redis.RedisIdempotency;
import io.dlock.testkit.TestTiming;
import io.dlock.testkit.server.RedisServerProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;

/**
 * Issue 14, item 2, at the HTTP edge: the store acts but its reply is lost. The filter must repeat
 * the call as the same request, so that the request runs once and its retry is replayed, instead of
 * a 500 followed by "in progress" (409) until the record's timeout.
 */
@SpringBootTest(
    classes = {OrdersApp.class, LostStoreReplyFilterTest.Store.class},
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class LostStoreReplyFilterTest {
  private final HttpClient http = HttpClient.newHttpClient();

  @LocalServerPort int port;
  @Autowired ReplyLosingStore store;

  /** A real store whose next claim or completion is made, but reported as failed. */
  static final class ReplyLosingStore implements DedupStore {
    private final DedupStore delegate;
    private final AtomicReference<String> loseNext = new AtomicReference<>("");

    ReplyLosingStore(DedupStore delegate) {
      this.delegate = delegate;
    }

    void loseNextReplyOf(String operation) {
      loseNext.set(operation);
    }

    private <T> T maybeLose(String operation, Supplier<T> call) {
      T result = call.get();
      if (loseNext.compareAndSet(operation, "")) {
        throw new IdempotencyStoreException("test: the reply of " + operation + " was lost", null);
      }
      return result;
    }

    @Override
    public ClaimAttempt tryClaim(
        String key, String fingerprint, String owner, Duration inProgressTimeout) {
      return maybeLose(
          "claim", () -> delegate.tryClaim(key, fingerprint, owner, inProgressTimeout));
    }

    @Override
    public boolean complete(String key, String owner, byte[] result, Duration retention) {
      return maybeLose("complete", () -> delegate.complete(key, owner, result, retention));
    }

    @Override
    public boolean fail(String key, String owner, Duration retention) {
      return maybeLose("fail", () -> delegate.fail(key, owner, retention));
    }
  }

  @TestConfiguration(proxyBeanMethods = false)
  static class Store {
    @Bean(destroyMethod = "close")
    RedisServerProcess redisServer() {
      return RedisServerProcess.start();
    }

    @Bean(destroyMethod = "close")
    RedisIdempotency redisIdempotency(RedisServerProcess server) {
      return RedisIdempotency.connect(server.uri());
    }

    @Bean
    ReplyLosingStore replyLosingStore(RedisIdempotency redis) {
      return new ReplyLosingStore(redis.dedupStore());
    }

    @Bean
    FilterRegistrationBean<IdempotencyKeyFilter> idempotencyKeyFilter(ReplyLosingStore store) {
      DedupRecords records =
          DedupRecords.on(store)
              .withInProgressTimeout(Duration.ofSeconds(30))
              .withRetention(Duration.ofHours(1));
      return new FilterRegistrationBean<>(
          new IdempotencyKeyFilter(
              records,
              IdempotencyKeySettings.defaults()
                  .withCallerResolver(CallerResolver.header("X-Caller"))));
    }
  }

  private HttpResponse<String> post(String key, String body) throws Exception {
    return http.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders"))
            .timeout(TestTiming.millis(30_000))
            .header("Content-Type", "application/json")
            .header("X-Caller", "lost-reply")
            .header("Idempotency-Key", key)
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void aClaimWhoseReplyWasLostRunsTheRequestOnceAndItsRetryIsReplayed() throws Exception {
    String key = "\"" + UUID.randomUUID() + "\"";
    int before = OrdersApp.ORDERS.get();
    store.loseNextReplyOf("claim");
    HttpResponse<String> first = post(key, "\"book\"");
    assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
    HttpResponse<String> retry = post(key, "\"book\"");
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.headers().firstValue(IdempotencyKeyFilter.REPLAYED_HEADER)).hasValue("true");
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(OrdersApp.ORDERS.get() - before).as("orders placed").isEqualTo(1);
  }

  @Test
  void aCompletionWhoseReplyWasLostIsStoredOnceAndItsRetryIsReplayed() throws Exception {
    String key = "\"" + UUID.randomUUID() + "\"";
    int before = OrdersApp.ORDERS.get();
    store.loseNextReplyOf("complete");
    HttpResponse<String> first = post(key, "\"pen\"");
    assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
    HttpResponse<String> retry = post(key, "\"pen\"");
    assertThat(retry.statusCode()).as(retry.body()).isEqualTo(201);
    assertThat(retry.headers().firstValue(IdempotencyKeyFilter.REPLAYED_HEADER)).hasValue("true");
    assertThat(OrdersApp.ORDERS.get() - before).as("orders placed").isEqualTo(1);
  }
}
