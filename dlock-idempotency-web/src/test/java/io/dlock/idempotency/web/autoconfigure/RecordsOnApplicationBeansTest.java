package io.dlock.idempotency.web.autoconfigure;

import static io.dlock.idempotency.web.autoconfigure.IdempotencyKeyAutoConfigurationTest.post;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.idempotency.DedupRecords;
import io.dlock.idempotency.jdbc.JdbcIdempotency;
import io.dlock.idempotency.jdbc.JdbcIdempotencySettings;
import io.dlock.idempotency.web.IdempotencyKeyFilter;
import io.dlock.testkit.TestTiming;
import io.dlock.testkit.server.RedisServerProcess;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.mock.web.MockHttpServletResponse;

/**
 * The records the filter keeps when the application defines none: on the server of its Spring Data
 * {@code LettuceConnectionFactory} (a real redis-server), or in its {@code DataSource} (H2 in
 * memory), each made by Spring Boot's own auto-configuration from {@code spring.*} properties; the
 * start-up failing when there is more than one bean to keep them in; and the application's own
 * {@code DedupRecords} winning over all of them.
 */
class RecordsOnApplicationBeansTest {
  private static RedisServerProcess redis;

  private final WebApplicationContextRunner runner =
      new WebApplicationContextRunner()
          .withConfiguration(AutoConfigurations.of(IdempotencyKeyAutoConfiguration.class))
          .withPropertyValues("dlock.idempotency.caller-header=X-Caller");

  @BeforeAll
  static void startRedis() {
    redis = RedisServerProcess.start();
  }

  @AfterAll
  static void stopRedis() {
    redis.close();
  }

  @Test
  void withOnlySpringDataRedisTheRecordsAreOnItsServerAndClosedWithoutClosingIt() {
    String prefix = "web-idem-" + UUID.randomUUID() + ":";
    runner
        .withConfiguration(AutoConfigurations.of(RedisAutoConfiguration.class))
        .withPropertyValues(
            "spring.data.redis.host=127.0.0.1",
            "spring.data.redis.port=" + redis.port(),
            "spring.data.redis.database=3",
            "spring.data.redis.timeout=5s",
            "dlock.idempotency.redis.key-prefix=" + prefix)
        .run(
            context -> {
              assertReplays(context);

              // On the factory's server and database, under the configured prefix.
              StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
              assertThat(template.keys(prefix + "*")).hasSize(1);

              // Closing what the auto-configuration made closes its connection, and leaves the
              // application's factory and the Lettuce resources they share running.
              int clients = clients(template);
              destroy(context, "dlockIdempotencyRedisConnection");
              await()
                  .atMost(TestTiming.scaled(Duration.ofSeconds(5)))
                  .untilAsserted(() -> assertThat(clients(template)).isEqualTo(clients - 1));
              context.getBean(LettuceConnectionFactory.class).resetConnection();
              template.opsForValue().set(prefix + "still-open", "yes");
              assertThat(template.opsForValue().get(prefix + "still-open")).isEqualTo("yes");
            });
  }

  @Test
  void withOnlyADataSourceTheRecordsAreInItsTableCreatedOrCheckedAtStart() {
    WebApplicationContextRunner withDatabase =
        runner
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class))
            .withPropertyValues(
                "spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
                "dlock.idempotency.jdbc.table-prefix=web_idem_");
    withDatabase
        .withPropertyValues(
            "dlock.idempotency.jdbc.create-schema=true", "dlock.idempotency.retention=PT2H")
        .run(
            context -> {
              assertReplays(context);
              assertThat(count(context.getBean(DataSource.class), "web_idem_dedup")).isEqualTo(1);
              assertThat(context.getBean(DedupRecords.class).retention())
                  .isEqualTo(Duration.ofHours(2));
            });
    // The table is there now: without create-schema, the start checks it and goes on.
    withDatabase.run(RecordsOnApplicationBeansTest::assertReplays);
    // A database without the table: the start fails, naming the property that creates it.
    withDatabase
        .withPropertyValues(
            "spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .hasStackTraceContaining(
                        "set dlock.idempotency.jdbc.create-schema=true to create the table"
                            + " web_idem_dedup"));
  }

  @Test
  void moreThanOneBeanToKeepTheRecordsInFailsTheStartUntilOneIsChosen() {
    runner
        .withBean("orders", DataSource.class, () -> h2())
        .withBean("reports", DataSource.class, () -> h2())
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("2 DataSource beans (orders, reports)")
                    .hasMessageContaining("mark the one to use @Primary")
                    .hasMessageContaining("define a DedupRecords bean"));
    runner
        .withBean("cache", LettuceConnectionFactory.class, LettuceConnectionFactory::new)
        .withBean("sessions", LettuceConnectionFactory.class, LettuceConnectionFactory::new)
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("2 LettuceConnectionFactory beans (cache, sessions)"));

    WebApplicationContextRunner both =
        runner
            .withBean(LettuceConnectionFactory.class, LettuceConnectionFactory::new)
            .withBean(DataSource.class, () -> h2())
            .withPropertyValues("dlock.idempotency.jdbc.create-schema=true");
    both.run(
        context ->
            assertThat(context)
                .getFailure()
                .rootCause()
                .hasMessageContaining(
                    "more than one bean it could keep its Idempotency-Key records in"
                        + " (LettuceConnectionFactory, DataSource)")
                .hasMessageContaining(
                    "set dlock.idempotency.store-bean to one of lettuce-connection-factory,"
                        + " data-source"));
    // Chosen: the records are in the database; the factory (localhost) is never connected to.
    both.withPropertyValues("dlock.idempotency.store-bean=data-source")
        .run(
            context -> {
              assertReplays(context);
              assertThat(context).doesNotHaveBean(IdempotencyRedisConnection.class);
            });
    // Of two DataSources, the @Primary one is the one injection picks, so it counts as one.
    runner
        .withBean("orders", DataSource.class, () -> h2(), d -> d.setPrimary(true))
        .withBean("reports", DataSource.class, () -> h2())
        .withPropertyValues("dlock.idempotency.jdbc.create-schema=true")
        .run(
            context -> {
              assertReplays(context);
              assertThat(count(context.getBean("orders", DataSource.class), "dlock_idem_dedup"))
                  .isEqualTo(1);
            });
  }

  @Test
  void theApplicationsOwnRecordsAreUsedWhateverElseItHas() {
    runner
        .withUserConfiguration(OwnRecords.class)
        .withConfiguration(AutoConfigurations.of(RedisAutoConfiguration.class))
        .withBean("orders", DataSource.class, () -> h2())
        .withBean("reports", DataSource.class, () -> h2())
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context.getBean(DedupRecords.class))
                  .isSameAs(context.getBean(OwnRecords.class).records);
              assertThat(context).doesNotHaveBean(IdempotencyRedisConnection.class);
              assertReplays(context);
              assertThat(count(OwnRecords.DATABASE, "own_dedup")).isEqualTo(1);
            });
    // Properties of the records dlock makes would be ignored beside them: refused, named.
    runner
        .withUserConfiguration(OwnRecords.class)
        .withPropertyValues("dlock.idempotency.retention=PT1H")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .hasMessageStartingWith(
                        "dlock.idempotency.retention apply only to the records"));
  }

  /** A retry with the same key is answered the first response, and the handler ran once. */
  private static void assertReplays(AssertableWebApplicationContext context) throws Exception {
    assertThat(context).hasNotFailed();
    @SuppressWarnings("unchecked")
    FilterRegistrationBean<IdempotencyKeyFilter> registration =
        context.getBean(FilterRegistrationBean.class);
    IdempotencyKeyFilter filter = registration.getFilter();
    AtomicInteger ran = new AtomicInteger();
    String key = UUID.randomUUID().toString();
    MockHttpServletResponse first = post(filter, "Idempotency-Key", key, ran);
    MockHttpServletResponse retry = post(filter, "Idempotency-Key", key, ran);
    assertThat(ran).hasValue(1);
    assertThat(first.getStatus()).isEqualTo(201);
    assertThat(retry.getStatus()).isEqualTo(201);
    assertThat(retry.getContentAsString()).isEqualTo(first.getContentAsString());
    assertThat(retry.getHeader(IdempotencyKeyFilter.REPLAYED_HEADER)).isEqualTo("true");
  }

  private static void destroy(AssertableWebApplicationContext context, String bean) {
    ((DefaultListableBeanFactory) context.getSourceApplicationContext().getBeanFactory())
        .destroySingleton(bean);
  }

  private static int clients(StringRedisTemplate template) {
    Integer clients =
        template.execute(
            (RedisCallback<Integer>)
                (RedisConnection connection) -> connection.serverCommands().getClientList().size());
    return clients == null ? 0 : clients;
  }

  private static JdbcDataSource h2() {
    JdbcDataSource dataSource = new JdbcDataSource();
    dataSource.setURL("jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1");
    return dataSource;
  }

  private static int count(DataSource dataSource, String table) throws SQLException {
    try (Connection c = dataSource.getConnection();
        Statement s = c.createStatement();
        ResultSet rs = s.executeQuery("SELECT COUNT(*) FROM " + table)) {
      rs.next();
      return rs.getInt(1);
    }
  }

  /** The application's own records, in a database of their own. */
  @Configuration(proxyBeanMethods = false)
  static class OwnRecords {
    static final JdbcDataSource DATABASE = h2();

    final DedupRecords records =
        DedupRecords.on(
            JdbcIdempotency.on(
                    DATABASE,
                    JdbcIdempotencySettings.defaults()
                        .withTablePrefix("own_")
                        .withCreateSchema(true))
                .dedupStore());

    @Bean
    DedupRecords ownDedupRecords() {
      return records;
    }
  }
}
