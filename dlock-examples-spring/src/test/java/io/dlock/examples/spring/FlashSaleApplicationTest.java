package io.dlock.examples.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.dlock.testkit.TestTiming;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The example as a user runs it: the application with its embedded redis-server, and concurrent
 * buyers over HTTP. With the lock nothing is oversold; without it, the same requests oversell.
 */
@SpringBootTest(
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    // dlock-idempotency-web is on the test class path for DocSnippetsTest only: the sale keeps no
    // Idempotency-Key records (the filter would want its table in the sale's DataSource).
    properties = {"flashsale.payment-time=50ms", "dlock.idempotency.enabled=false"})
class FlashSaleApplicationTest {
  private static final int STOCK = 10;
  private static final int BUYERS = 16;

  @LocalServerPort int port;

  private final HttpClient http = HttpClient.newHttpClient();
  private final ObjectMapper json = new ObjectMapper();

  @Test
  void concurrentBuyersThroughTheLockNeverOversell() throws Exception {
    post("/sale/sku-1/restock?quantity=" + STOCK);
    List<HttpResponse<String>> responses = buyConcurrently("/sale/sku-1/buy?quantity=1");

    long ok = responses.stream().filter(r -> r.statusCode() == 200).count();
    long soldOut = responses.stream().filter(r -> r.statusCode() == 409).count();
    assertThat(ok).isEqualTo(STOCK);
    assertThat(soldOut).isEqualTo(BUYERS - STOCK);
    JsonNode inventory = get("/sale/sku-1");
    assertThat(inventory.get("stock").asInt()).isZero();
    assertThat(inventory.get("sold").asInt()).isEqualTo(STOCK);
    // Every sale carried a fencing token, each newer than the one before.
    List<Long> tokens = new ArrayList<>();
    for (HttpResponse<String> r : responses) {
      if (r.statusCode() == 200) {
        tokens.add(json.readTree(r.body()).get("fencingToken").asLong());
      }
    }
    assertThat(tokens).doesNotHaveDuplicates().allMatch(t -> t > 0);
  }

  @Test
  void theSameBuyersWithoutTheLockOversell() throws Exception {
    post("/sale/sku-2/restock?quantity=" + STOCK);
    buyConcurrently("/sale/sku-2/buy-unlocked?quantity=1");
    // Buyers read the same stock during one another's 50 ms payment and each sold an item.
    assertThat(get("/sale/sku-2").get("sold").asInt()).isGreaterThan(STOCK);
  }

  @Test
  void aQuantityOutOfRangeIsABadRequestThatSaysWhy() throws Exception {
    post("/sale/sku-5/restock?quantity=" + STOCK);
    for (String path :
        List.of("/sale/sku-5/buy?quantity=-1", "/sale/sku-5/buy-unlocked?quantity=1001")) {
      HttpResponse<String> response = send(path);
      assertThat(response.statusCode()).as(path).isEqualTo(400);
      assertThat(json.readTree(response.body()).get("detail").asText())
          .as(path)
          .startsWith("quantity must be from 1 to 1000, but was ");
    }
    HttpResponse<String> restock = send("/sale/sku-5/restock?quantity=-3");
    assertThat(restock.statusCode()).isEqualTo(400);
    assertThat(json.readTree(restock.body()).get("detail").asText())
        .isEqualTo("quantity must be from 0 to 1000000, but was -3");
    assertThat(get("/sale/sku-5").get("stock").asInt()).isEqualTo(STOCK); // nothing changed
  }

  @Test
  void theLocksEndpointAndHealthAreExposed() throws Exception {
    assertThat(get("/actuator/locks").get("backend").asText()).isEqualTo("redis");
    assertThat(get("/actuator/health/dlock").get("status").asText()).isEqualTo("UP");
  }

  @Test
  void purchasesAreMeasuredUnderTheLocksNamePatternNotItsKey() throws Exception {
    post("/sale/sku-3/restock?quantity=" + STOCK);
    post("/sale/sku-3/buy?quantity=1");
    post("/sale/sku-4/restock?quantity=" + STOCK);
    post("/sale/sku-4/buy?quantity=1");
    JsonNode acquire = get("/actuator/metrics/dlock.acquire");
    // One series for the stock, whatever the sku: the lock tag is the annotation's name.
    assertThat(tagValues(acquire, "lock")).contains("stock").noneMatch(v -> v.contains("sku-"));
    JsonNode stock = get("/actuator/metrics/dlock.acquire?tag=lock:stock&tag=backend:redis");
    assertThat(stock.get("measurements").get(0).get("statistic").asText()).isEqualTo("COUNT");
    assertThat(stock.get("measurements").get(0).get("value").asDouble()).isGreaterThanOrEqualTo(2);
  }

  private static List<String> tagValues(JsonNode metric, String tag) {
    for (JsonNode t : metric.get("availableTags")) {
      if (t.get("tag").asText().equals(tag)) {
        List<String> values = new ArrayList<>();
        t.get("values").forEach(v -> values.add(v.asText()));
        return values;
      }
    }
    return List.of();
  }

  private List<HttpResponse<String>> buyConcurrently(String path) throws Exception {
    List<CompletableFuture<HttpResponse<String>>> futures = new ArrayList<>();
    for (int i = 0; i < BUYERS; i++) {
      futures.add(
          http.sendAsync(
              HttpRequest.newBuilder(uri(path)).POST(HttpRequest.BodyPublishers.noBody()).build(),
              HttpResponse.BodyHandlers.ofString()));
    }
    List<HttpResponse<String>> responses = new ArrayList<>();
    long timeout = TestTiming.scaled(Duration.ofSeconds(30)).toMillis();
    for (CompletableFuture<HttpResponse<String>> f : futures) {
      responses.add(f.get(timeout, TimeUnit.MILLISECONDS));
    }
    return responses;
  }

  private JsonNode get(String path) throws Exception {
    HttpResponse<String> response =
        http.send(HttpRequest.newBuilder(uri(path)).build(), HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return json.readTree(response.body());
  }

  private void post(String path) throws Exception {
    HttpResponse<String> response = send(path);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
  }

  private HttpResponse<String> send(String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(uri(path)).POST(HttpRequest.BodyPublishers.noBody()).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private URI uri(String path) {
    return URI.create("http://127.0.0.1:" + port + path);
  }
}
