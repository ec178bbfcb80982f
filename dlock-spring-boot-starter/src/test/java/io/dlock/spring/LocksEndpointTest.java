package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/** The {@code locks} endpoint's JSON and the health group, over HTTP in a full application. */
@SpringBootTest(
    classes = LocksEndpointTest.App.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "management.endpoints.web.exposure.include=health,locks,semaphores",
      "management.endpoint.health.show-components=always"
    })
class LocksEndpointTest {
  private static final String PREFIX = "endpoint-" + UUID.randomUUID() + ":";

  @DynamicPropertySource
  static void backend(DynamicPropertyRegistry registry) {
    registry.add("dlock.backend", TestRedis::uri);
    registry.add("dlock.key-prefix", () -> PREFIX);
  }

  @LocalServerPort int port;
  @Autowired Holder holder;
  @Autowired io.dlock.LockClient client;

  private final HttpClient http = HttpClient.newHttpClient();
  private final ObjectMapper json = new ObjectMapper();

  @Test
  void listsTheLocksThisInstanceHoldsNow() throws Exception {
    assertThat(get("/actuator/locks").get("locks")).isEmpty();

    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch leave = new CountDownLatch(1);
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Instant before = Instant.now().minusSeconds(1);
      Future<?> holding = pool.submit(() -> holder.hold("sku-42", entered, leave));
      assertThat(entered.await(10, TimeUnit.SECONDS)).isTrue();

      JsonNode body = get("/actuator/locks");
      assertThat(body.get("backend").asText()).isEqualTo("redis");
      assertThat(body.get("locks")).hasSize(1);
      JsonNode lock = body.get("locks").get(0);
      assertThat(lock.get("name").asText()).isEqualTo(PREFIX + "stock:sku-42");
      assertThat(lock.get("fencingToken").asLong()).isEqualTo(holder.token()).isPositive();
      assertThat(lock.get("holdCount").asInt()).isEqualTo(1);
      assertThat(Instant.parse(lock.get("heldSince").asText())).isAfter(before);
      assertThat(lock.get("leaseRemainingMillis").asLong()).isBetween(1L, 30_000L);
      assertThat(Duration.parse(lock.get("leaseRemaining").asText())).isPositive();
      assertThat(lock.get("autoRenew").asBoolean()).isTrue();
      assertThat(lock.get("state").asText()).isEqualTo("VALID");

      leave.countDown();
      holding.get(10, TimeUnit.SECONDS);
    } finally {
      pool.shutdownNow();
    }
    assertThat(get("/actuator/locks").get("locks")).isEmpty();
  }

  @Test
  void listsThePermitsOfASemaphoreHeldNowByAnyInstance() throws Exception {
    String name = PREFIX + "exports";
    assertThat(get("/actuator/semaphores/" + name).get("permits")).isEmpty();
    try (io.dlock.Permit permit = client.semaphore(name, 3).tryAcquire(2).orElseThrow()) {
      JsonNode body = get("/actuator/semaphores/" + name);
      assertThat(body.get("semaphore").asText()).isEqualTo(name);
      assertThat(body.get("permits")).hasSize(1);
      JsonNode held = body.get("permits").get(0);
      assertThat(held.get("count").asInt()).isEqualTo(2);
      assertThat(held.get("fencingToken").asLong()).isEqualTo(permit.fencingToken());
      assertThat(held.get("leaseRemainingMillis").asLong()).isBetween(1L, 30_000L);
      assertThat(get("/actuator/locks").get("locks").get(0).get("name").asText()).isEqualTo(name);
    }
    assertThat(get("/actuator/semaphores/" + name).get("permits")).isEmpty();
  }

  @Test
  void healthShowsTheBackend() throws Exception {
    JsonNode health = get("/actuator/health/dlock");
    assertThat(health.get("status").asText()).isEqualTo("UP");
  }

  private JsonNode get(String path) throws Exception {
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return json.readTree(response.body());
  }

  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  static class App {
    @Bean
    Holder holder() {
      return new Holder();
    }
  }

  /** Holds a lock until told to leave. */
  public static class Holder {
    final AtomicLong token = new AtomicLong();

    public long token() {
      return token.get();
    }

    @Locked(name = "stock", key = "#sku")
    public void hold(String sku, CountDownLatch entered, CountDownLatch leave) {
      token.set(LockedMethodContext.currentFencingToken());
      entered.countDown();
      try {
        leave.await(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
