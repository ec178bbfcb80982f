package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClients;
import io.dlock.LockTimeoutException;
import io.dlock.spring.autoconfigure.DlockAutoConfiguration;
import io.dlock.spring.autoconfigure.DlockChecksAutoConfiguration;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.http.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.autoconfigure.jackson.JacksonAutoConfiguration;
import org.springframework.boot.autoconfigure.web.servlet.WebMvcAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.ContextConsumer;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * The mapping docs/spring.md shows: a {@code @Locked} method that did not get its lock answers 409
 * (or 423) as an RFC 9457 problem, instead of a 500. The lock is held by another client (another
 * instance) while the request is made, so the method's one attempt finds it held.
 */
class LockTimeoutHttpStatusTest {
  private static final String PREFIX = "http-" + UUID.randomUUID() + ":";
  private static LockClient otherInstance;

  private final WebApplicationContextRunner runner =
      new WebApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  AopAutoConfiguration.class,
                  JacksonAutoConfiguration.class,
                  HttpMessageConvertersAutoConfiguration.class,
                  WebMvcAutoConfiguration.class,
                  DlockChecksAutoConfiguration.class,
                  DlockAutoConfiguration.class))
          .withUserConfiguration(Sale.class)
          .withPropertyValues("dlock.backend=" + TestRedis.uri(), "dlock.key-prefix=" + PREFIX);

  @BeforeAll
  static void connect() {
    otherInstance = LockClients.connect(TestRedis.uri());
  }

  @AfterAll
  static void close() {
    otherInstance.close();
  }

  @Test
  void aLockHeldElsewhereAnswers409() {
    runner
        .withBean(LockFailureAdvice.class, () -> new LockFailureAdvice(HttpStatus.CONFLICT))
        .run(
            whileHeld(
                "sku-1",
                mvc ->
                    mvc.perform(post("/sale/sku-1/buy"))
                        .andExpect(status().isConflict())
                        .andExpect(
                            content().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON))
                        .andExpect(jsonPath("$.status").value(409))));
  }

  @Test
  void orAnswers423() {
    runner
        .withBean(LockFailureAdvice.class, () -> new LockFailureAdvice(HttpStatus.LOCKED))
        .run(
            whileHeld(
                "sku-2",
                mvc -> mvc.perform(post("/sale/sku-2/buy")).andExpect(status().isLocked())));
  }

  @Test
  void aFreeLockAnswers200() {
    runner
        .withBean(LockFailureAdvice.class, () -> new LockFailureAdvice(HttpStatus.CONFLICT))
        .run(
            context ->
                mvc(context)
                    .perform(post("/sale/sku-3/buy"))
                    .andExpect(status().isOk())
                    .andExpect(content().string("sold sku-3")));
  }

  @Test
  void withoutTheAdviceTheExceptionReachesTheServletContainer() {
    // What applications got before: the container's 500, with the stack trace logged as an error.
    runner.run(
        whileHeld(
            "sku-4",
            mvc ->
                assertThatThrownBy(() -> mvc.perform(post("/sale/sku-4/buy")))
                    .hasRootCauseInstanceOf(LockTimeoutException.class)));
  }

  private static ContextConsumer<AssertableWebApplicationContext> whileHeld(
      String sku, MvcCall call) {
    return context -> {
      assertThat(context).hasNotFailed();
      try (Lease held = otherInstance.lock(PREFIX + "stock:" + sku).acquire(Duration.ZERO)) {
        assertThat(held.isValid()).isTrue();
        call.run(mvc(context));
      }
    };
  }

  private static MockMvc mvc(AssertableWebApplicationContext context) {
    return MockMvcBuilders.webAppContextSetup(context).build();
  }

  interface MvcCall {
    void run(MockMvc mvc) throws Exception;
  }

  /** As in docs/spring.md: the application's own advice. */
  @RestControllerAdvice
  static class LockFailureAdvice {
    private final HttpStatus whenHeld;

    LockFailureAdvice(HttpStatus whenHeld) {
      this.whenHeld = whenHeld;
    }

    @ExceptionHandler(LockTimeoutException.class)
    ProblemDetail lockTimeout(LockTimeoutException e) {
      return ProblemDetail.forStatusAndDetail(whenHeld, "In use by another request; try again.");
    }

    @ExceptionHandler(BackendUnavailableException.class)
    ProblemDetail lockServiceDown(BackendUnavailableException e) {
      return ProblemDetail.forStatusAndDetail(
          HttpStatus.SERVICE_UNAVAILABLE, "The lock service did not answer; try again.");
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class Sale {
    @Bean
    Stock stock() {
      return new Stock();
    }

    @Bean
    SaleController saleController(Stock stock) {
      return new SaleController(stock);
    }
  }

  static class Stock {
    @Locked(name = "stock", key = "#sku", waitTime = "0")
    public String buy(String sku) {
      return "sold " + sku;
    }
  }

  @RestController
  static class SaleController {
    private final Stock stock;

    SaleController(Stock stock) {
      this.stock = stock;
    }

    @PostMapping("/sale/{sku}/buy")
    String buy(@PathVariable String sku) {
      return stock.buy(sku);
    }
  }
}
