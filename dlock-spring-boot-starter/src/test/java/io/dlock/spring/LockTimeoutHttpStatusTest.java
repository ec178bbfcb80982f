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
import io.dlock.spring.SaleEndpoints.SaleController;
import io.dlock.spring.SaleEndpoints.Stock;
import io.dlock.spring.autoconfigure.DlockAutoConfiguration;
import io.dlock.spring.autoconfigure.DlockChecksAutoConfiguration;
import java.time.Duration;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.test.web.servlet.setup.StandaloneMockMvcBuilder;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * The mapping docs/spring.md shows: a {@code @Locked} method that did not get its lock answers 409
 * (or 423) as an RFC 9457 problem, instead of a 500. The lock is held by another client (another
 * instance) while the request is made, so the method's one attempt finds it held. One application
 * context (the starter and the {@code @Locked} bean); Spring MVC is set up around the controller
 * alone (MockMvc standalone), a fraction of the cost of a web application context.
 */
class LockTimeoutHttpStatusTest {
  private static final String PREFIX = "http-" + UUID.randomUUID() + ":";
  private static LockClient otherInstance;

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  AopAutoConfiguration.class,
                  DlockChecksAutoConfiguration.class,
                  DlockAutoConfiguration.class))
          .withBean(Stock.class)
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
  void aLockHeldElsewhereAnswers409Or423AndAFreeOne200() {
    runner.run(
        context -> {
          assertThat(context).hasNotFailed();
          MockMvc conflict = mvc(context, new LockFailureAdvice(HttpStatus.CONFLICT));
          MockMvc locked = mvc(context, new LockFailureAdvice(HttpStatus.LOCKED));
          try (Lease held = otherInstance.lock(PREFIX + "stock:sku-1").acquire(Duration.ZERO)) {
            assertThat(held.isValid()).isTrue();
            conflict
                .perform(post("/sale/sku-1/buy"))
                .andExpect(status().isConflict())
                .andExpect(content().contentTypeCompatibleWith(MediaType.APPLICATION_PROBLEM_JSON))
                .andExpect(jsonPath("$.status").value(409));
            locked.perform(post("/sale/sku-1/buy")).andExpect(status().isLocked());
          }
          conflict
              .perform(post("/sale/sku-1/buy"))
              .andExpect(status().isOk())
              .andExpect(content().string("sold sku-1"));
        });
  }

  @Test
  void withoutTheAdviceTheExceptionReachesTheServletContainer() {
    // What applications got before: the container's 500, with the stack trace logged as an error.
    runner.run(
        context -> {
          MockMvc plain = mvc(context, null);
          try (Lease held = otherInstance.lock(PREFIX + "stock:sku-2").acquire(Duration.ZERO)) {
            assertThat(held.isValid()).isTrue();
            assertThatThrownBy(() -> plain.perform(post("/sale/sku-2/buy")))
                .hasRootCauseInstanceOf(LockTimeoutException.class);
          }
        });
  }

  /** The controller over the context's (proxied) {@code @Locked} bean, with the advice if any. */
  private static MockMvc mvc(ApplicationContext context, @Nullable Object advice) {
    StandaloneMockMvcBuilder mvc =
        MockMvcBuilders.standaloneSetup(new SaleController(context.getBean(Stock.class)));
    if (advice != null) {
      mvc.setControllerAdvice(advice);
    }
    return mvc.build();
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
}
