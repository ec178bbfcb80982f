package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClients;
import io.dlock.spring.SaleEndpoints.SaleController;
import io.dlock.spring.SaleEndpoints.Stock;
import io.dlock.spring.autoconfigure.DlockAutoConfiguration;
import io.dlock.spring.autoconfigure.DlockChecksAutoConfiguration;
import io.dlock.spring.autoconfigure.DlockWebAutoConfiguration;
import io.dlock.spring.web.LockFailureProblemDetails;
import java.time.Duration;
import java.util.UUID;
import org.hamcrest.Matchers;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.http.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.autoconfigure.jackson.JacksonAutoConfiguration;
import org.springframework.boot.autoconfigure.web.servlet.WebMvcAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;

/**
 * {@code dlock.web.problem-details.enabled=true}: a {@code @Locked} method whose lock another
 * instance holds answers 409 (or 423) as an RFC 9457 problem, an unreachable lock server 503; off
 * by default.
 */
class LockFailureProblemDetailsTest {
  private static final String PREFIX = "problem-" + UUID.randomUUID() + ":";
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
                  DlockAutoConfiguration.class,
                  DlockWebAutoConfiguration.class))
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
  void aLockHeldElsewhereIs409AndAnUnreachableServer503() throws Exception {
    runner
        .withPropertyValues("dlock.web.problem-details.enabled=true")
        // An application's catch-all advice does not take these first.
        .withUserConfiguration(CatchAll.class)
        .run(
            context -> {
              MockMvc mvc = mvc(context);
              try (Lease held = otherInstance.lock(PREFIX + "stock:sku-1").acquire(Duration.ZERO)) {
                assertThat(held.isValid()).isTrue();
                mvc.perform(post("/sale/sku-1/buy"))
                    .andExpect(status().isConflict())
                    .andExpect(
                        content().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON))
                    .andExpect(jsonPath("$.status").value(409))
                    .andExpect(jsonPath("$.reason").value("lock-timeout"))
                    .andExpect(
                        jsonPath("$.detail").value(Matchers.not(Matchers.containsString("sku-1"))));
              }
              mvc.perform(post("/sale/sku-1/buy")).andExpect(status().isOk());
              mvc.perform(post("/sale/down"))
                  .andExpect(status().isServiceUnavailable())
                  .andExpect(jsonPath("$.reason").value("lock-service-unavailable"));
            });
  }

  @Test
  void theStatusMayBe423() {
    runner
        .withPropertyValues(
            "dlock.web.problem-details.enabled=true",
            "dlock.web.problem-details.lock-timeout-status=423")
        .run(
            context -> {
              try (Lease held = otherInstance.lock(PREFIX + "stock:sku-2").acquire(Duration.ZERO)) {
                assertThat(held.isValid()).isTrue();
                mvc(context).perform(post("/sale/sku-2/buy")).andExpect(status().isLocked());
              }
            });
  }

  @Test
  void offByDefault() {
    runner.run(context -> assertThat(context).doesNotHaveBean(LockFailureProblemDetails.class));
  }

  @Test
  void aStatusThatIsNoErrorFailsTheStart() {
    runner
        .withPropertyValues(
            "dlock.web.problem-details.enabled=true",
            "dlock.web.problem-details.lock-timeout-status=200")
        .run(
            context -> {
              assertThat(context).hasFailed();
              assertThat(context.getStartupFailure())
                  .rootCause()
                  .hasMessageContaining("dlock.web.problem-details.lock-timeout-status");
            });
  }

  private static MockMvc mvc(AssertableWebApplicationContext context) {
    return MockMvcBuilders.webAppContextSetup(context).build();
  }

  @ControllerAdvice
  static class CatchAll {
    @ExceptionHandler(Exception.class)
    ResponseEntity<String> any(Exception e) {
      return ResponseEntity.status(HttpStatus.I_AM_A_TEAPOT).body("caught by the application");
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
}
