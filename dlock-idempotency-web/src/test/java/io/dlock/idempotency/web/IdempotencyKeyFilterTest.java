package io.dlock.idempotency.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.testkit.TestTiming;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The filter through a real embedded Tomcat on a random port, with a real store (one subclass per
 * backend), driven by plain HTTP requests.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
abstract class IdempotencyKeyFilterTest {
  private final HttpClient http = HttpClient.newHttpClient();

  @LocalServerPort int port;

  private HttpResponse<String> post(String path, String caller, String key, String body)
      throws Exception {
    return send(request(path, caller, key, body));
  }

  private HttpRequest request(String path, String caller, String key, String body) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .timeout(TestTiming.millis(30_000))
            .header("Content-Type", "application/json")
            .header("X-Caller", caller)
            .POST(HttpRequest.BodyPublishers.ofString(body));
    if (key != null) {
      request.header("Idempotency-Key", key);
    }
    return request.build();
  }

  private HttpResponse<String> send(HttpRequest request) throws Exception {
    return http.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private static String newKey() {
    return "\"" + UUID.randomUUID() + "\"";
  }

  @Test
  void theFirstCallRunsAndItsRetryIsReplayedWithoutRunningAgain() throws Exception {
    String key = newKey();
    HttpResponse<String> first = post("/orders", "alice", key, "{\"sku\":\"book\"}");
    int ordersAfterFirst = OrdersApp.ORDERS.get();
    HttpResponse<String> retry = post("/orders", "alice", key, "{\"sku\":\"book\"}");

    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(first.headers().firstValue(IdempotencyKeyFilter.REPLAYED_HEADER)).isEmpty();
    assertThat(first.body()).contains("\"item\":{\"sku\":\"book\"}");
    assertThat(retry.statusCode()).isEqualTo(201);
    assertThat(retry.body()).isEqualTo(first.body());
    assertThat(retry.headers().firstValue("Location"))
        .isEqualTo(first.headers().firstValue("Location"))
        .isPresent();
    assertThat(retry.headers().firstValue("Content-Type"))
        .hasValueSatisfying(type -> assertThat(type).startsWith("application/json"));
    assertThat(retry.headers().firstValue(IdempotencyKeyFilter.REPLAYED_HEADER)).hasValue("true");
    assertThat(retry.headers().firstValue("X-Not-Stored")).isEmpty();
    assertThat(OrdersApp.ORDERS.get()).isEqualTo(ordersAfterFirst);
  }

  @Test
  void aRetryWhileTheFirstIsStillRunningGets409WithRetryAfter() throws Exception {
    OrdersApp.slowEntered = new CountDownLatch(1);
    OrdersApp.slowRelease = new CountDownLatch(1);
    String key = newKey();
    String body = "{\"sku\":\"slow\"}";
    CompletableFuture<HttpResponse<String>> first =
        http.sendAsync(
            request("/orders", "alice", key, body), HttpResponse.BodyHandlers.ofString());
    try {
      assertThat(
              OrdersApp.slowEntered.await(
                  TestTiming.millis(20_000).toMillis(), TimeUnit.MILLISECONDS))
          .isTrue();
      HttpResponse<String> concurrent = post("/orders", "alice", key, body);
      assertThat(concurrent.statusCode()).isEqualTo(409);
      assertThat(concurrent.headers().firstValue("Retry-After"))
          .hasValueSatisfying(seconds -> assertThat(Long.parseLong(seconds)).isPositive());
      assertThat(concurrent.headers().firstValue("Content-Type"))
          .hasValue("application/problem+json");
    } finally {
      OrdersApp.slowRelease.countDown();
    }
    HttpResponse<String> done =
        first.get(TestTiming.millis(20_000).toMillis(), TimeUnit.MILLISECONDS);
    assertThat(done.statusCode()).isEqualTo(201);
    HttpResponse<String> after = post("/orders", "alice", key, body);
    assertThat(after.statusCode()).isEqualTo(201);
    assertThat(after.body()).isEqualTo(done.body());
    assertThat(after.headers().firstValue(IdempotencyKeyFilter.REPLAYED_HEADER)).hasValue("true");
  }

  @Test
  void theSameKeyWithADifferentBodyGets422() throws Exception {
    String key = newKey();
    HttpResponse<String> first = post("/orders", "alice", key, "{\"sku\":\"book\",\"qty\":1}");
    int ordersAfterFirst = OrdersApp.ORDERS.get();
    HttpResponse<String> other = post("/orders", "alice", key, "{\"sku\":\"book\",\"qty\":2}");
    assertThat(first.statusCode()).isEqualTo(201);
    assertThat(other.statusCode()).isEqualTo(422);
    assertThat(other.body()).contains("different body");
    assertThat(OrdersApp.ORDERS.get()).isEqualTo(ordersAfterFirst);
  }

  @Test
  void differentCallersWithTheSameKeyAreIsolated() throws Exception {
    String key = newKey();
    String body = "{\"sku\":\"pen\"}";
    HttpResponse<String> alice = post("/orders", "alice", key, body);
    HttpResponse<String> bob = post("/orders", "bob", key, body);
    HttpResponse<String> aliceAgain = post("/orders", "alice", key, body);
    HttpResponse<String> bobAgain = post("/orders", "bob", key, body);

    assertThat(alice.statusCode()).isEqualTo(201);
    assertThat(bob.statusCode()).isEqualTo(201);
    assertThat(bob.headers().firstValue(IdempotencyKeyFilter.REPLAYED_HEADER)).isEmpty();
    assertThat(bob.body()).isNotEqualTo(alice.body());
    assertThat(aliceAgain.body()).isEqualTo(alice.body());
    assertThat(bobAgain.body()).isEqualTo(bob.body());
    assertThat(aliceAgain.headers().firstValue(IdempotencyKeyFilter.REPLAYED_HEADER))
        .hasValue("true");
  }

  @Test
  void requestsWithoutTheHeaderPassThrough() throws Exception {
    HttpResponse<String> one = post("/orders", "alice", null, "{\"sku\":\"cup\"}");
    HttpResponse<String> two = post("/orders", "alice", null, "{\"sku\":\"cup\"}");
    assertThat(one.statusCode()).isEqualTo(201);
    assertThat(two.statusCode()).isEqualTo(201);
    assertThat(two.body()).isNotEqualTo(one.body());
  }

  @Test
  void aServerErrorIsNotStoredSoTheRetryRunsAgain() throws Exception {
    String key = newKey();
    // Make the next order number odd, so the first call fails and the retry succeeds.
    if (OrdersApp.ORDERS.get() % 2 == 1) {
      post("/orders", "alice", null, "{}");
    }
    HttpResponse<String> first = post("/unstable", "alice", key, "fail-once");
    HttpResponse<String> retry = post("/unstable", "alice", key, "fail-once");
    HttpResponse<String> again = post("/unstable", "alice", key, "fail-once");
    assertThat(first.statusCode()).isEqualTo(503);
    assertThat(retry.statusCode()).isEqualTo(200);
    assertThat(retry.headers().firstValue(IdempotencyKeyFilter.REPLAYED_HEADER)).isEmpty();
    assertThat(again.body()).isEqualTo(retry.body());
    assertThat(again.headers().firstValue(IdempotencyKeyFilter.REPLAYED_HEADER)).hasValue("true");
  }

  @Test
  void anInvalidKeyGets400() throws Exception {
    HttpResponse<String> response = post("/orders", "alice", "\"\"", "{}");
    assertThat(response.statusCode()).isEqualTo(400);
  }
}
