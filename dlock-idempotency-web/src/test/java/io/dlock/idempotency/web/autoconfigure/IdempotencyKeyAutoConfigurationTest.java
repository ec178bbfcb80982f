package io.dlock.idempotency.web.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.idempotency.DedupRecords;
import io.dlock.idempotency.jdbc.JdbcIdempotency;
import io.dlock.idempotency.jdbc.JdbcIdempotencySettings;
import io.dlock.idempotency.web.IdempotencyKeyFilter;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.mock.web.MockFilterChain;
import org.springframework.mock.web.MockHttpServletRequest;
import org.springframework.mock.web.MockHttpServletResponse;

/** The filter's auto-configuration: registered with the application's store and the properties. */
class IdempotencyKeyAutoConfigurationTest {
  private final WebApplicationContextRunner runner =
      new WebApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(IdempotencyKeyAutoConfiguration.class));

  @Test
  void withAStoreTheFilterIsRegisteredAsThePropertiesSay() {
    runner
        .withUserConfiguration(Store.class)
        .withPropertyValues(
            "dlock.idempotency.header-name=X-Request-Key",
            "dlock.idempotency.url-patterns=/orders/*",
            "dlock.idempotency.order=5",
            "dlock.idempotency.caller-header=X-Caller")
        .run(
            context -> {
              @SuppressWarnings("unchecked")
              FilterRegistrationBean<IdempotencyKeyFilter> registration =
                  context.getBean(FilterRegistrationBean.class);
              assertThat(registration.getUrlPatterns()).containsExactly("/orders/*");
              assertThat(registration.getOrder()).isEqualTo(5);

              // The configured header is the one honoured: a retry replays the first answer.
              IdempotencyKeyFilter filter = registration.getFilter();
              AtomicInteger ran = new AtomicInteger();
              String key = UUID.randomUUID().toString();
              MockHttpServletResponse first = post(filter, "X-Request-Key", key, ran);
              MockHttpServletResponse retry = post(filter, "X-Request-Key", key, ran);
              assertThat(ran).hasValue(1);
              assertThat(retry.getContentAsString()).isEqualTo(first.getContentAsString());
              assertThat(retry.getHeader(IdempotencyKeyFilter.REPLAYED_HEADER)).isEqualTo("true");

              // The default header name is not: no key, so the handler runs each time.
              post(filter, "Idempotency-Key", key, ran);
              assertThat(ran).hasValue(2);
            });
  }

  @Test
  void withoutAStoreOrWhenSwitchedOffThereIsNoFilter() {
    runner.run(context -> assertThat(context).doesNotHaveBean(FilterRegistrationBean.class));
    runner
        .withUserConfiguration(Store.class)
        .withPropertyValues("dlock.idempotency.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(FilterRegistrationBean.class));
  }

  @Test
  void aBadPropertyFailsTheStartNamingIt() {
    runner
        .withUserConfiguration(Store.class)
        .withPropertyValues("dlock.idempotency.header-name=not a header")
        .run(
            context ->
                assertThat(context)
                    .hasFailed()
                    .getFailure()
                    .hasStackTraceContaining(
                        "dlock.idempotency: headerName must be an HTTP field name"));
  }

  /**
   * A POST of a JSON body through {@code filter} to a handler that counts its runs in {@code ran}.
   */
  static MockHttpServletResponse post(
      IdempotencyKeyFilter filter, String header, String key, AtomicInteger ran) throws Exception {
    MockHttpServletRequest request = new MockHttpServletRequest("POST", "/orders/new");
    request.addHeader(header, key);
    request.addHeader("X-Caller", "tester");
    request.setContentType("application/json");
    request.setContent("{\"item\":1}".getBytes(StandardCharsets.UTF_8));
    MockHttpServletResponse response = new MockHttpServletResponse();
    HttpServlet handler =
        new HttpServlet() {
          @Override
          protected void doPost(HttpServletRequest req, HttpServletResponse resp)
              throws IOException {
            int order = ran.incrementAndGet();
            resp.setStatus(201);
            resp.setContentType("application/json");
            resp.getWriter().write("{\"order\":" + order + "}");
          }
        };
    filter.doFilter(request, response, new MockFilterChain(handler));
    return response;
  }

  @Configuration(proxyBeanMethods = false)
  static class Store {
    @Bean
    DedupRecords dedupRecords() {
      JdbcDataSource dataSource = new JdbcDataSource();
      dataSource.setURL(
          "jdbc:h2:mem:idempotency-autoconfig-" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
      JdbcIdempotency db =
          JdbcIdempotency.on(dataSource, JdbcIdempotencySettings.defaults().withCreateSchema(true));
      return DedupRecords.on(db.dedupStore())
          .withInProgressTimeout(Duration.ofSeconds(30))
          .withRetention(Duration.ofHours(1));
    }
  }
}
