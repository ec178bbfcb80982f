package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.redis.RedisLockSettings;
import io.dlock.spring.autoconfigure.DlockAutoConfiguration;
import io.dlock.testkit.TestTiming;
import io.lettuce.core.event.connection.ConnectedEvent;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.curator.test.TestingServer;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.support.AbstractBeanDefinition;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.autoconfigure.data.redis.RedisAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisSocketConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.jdbc.datasource.DriverManagerDataSource;

/**
 * The client built over beans the application already has: its {@code DataSource} (H2 in memory,
 * lease rows), its {@code CuratorFramework} (a real ZooKeeper server in this JVM) and its Spring
 * Data {@code LettuceConnectionFactory} (a real Redis server); and {@code dlock.backend} winning
 * over them.
 */
class ExistingBeanBackendsTest {
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  AopAutoConfiguration.class,
                  DataSourceAutoConfiguration.class,
                  DlockAutoConfiguration.class))
          .withUserConfiguration(CounterConfiguration.class);

  @Test
  void overTheApplicationsDataSource() {
    runner
        .withPropertyValues(
            "spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
            "dlock.jdbc.create-schema=true")
        .run(
            context -> {
              assertThat(context.getBean(LockClient.class).backendName()).isEqualTo("jdbc");
              assertNoLostUpdates(context);
            });
  }

  /** A missing table names the application's property, not the library's Java call (issue 30). */
  @Test
  void aMissingLockTableInTheApplicationsDataSourceNamesTheProperty() {
    runner
        .withPropertyValues(
            "spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .hasStackTraceContaining(
                        "dlock's lock table is missing in the application's DataSource: set"
                            + " dlock.jdbc.create-schema=true"));
  }

  @Test
  void overTheApplicationsCuratorFramework() throws Exception {
    try (TestingServer zookeeper = new TestingServer(true)) {
      runner
          .withBean(
              CuratorFramework.class,
              () -> {
                CuratorFramework curator =
                    CuratorFrameworkFactory.newClient(
                        zookeeper.getConnectString(), new RetryOneTime(100));
                curator.start();
                return curator;
              },
              definition -> definition.setDestroyMethodName("close"))
          // The runner's DataSource auto-configuration makes an embedded one too: choose.
          .withPropertyValues("dlock.backend-bean=curator-framework")
          .run(
              context -> {
                assertThat(context.getBean(LockClient.class).backendName()).isEqualTo("zookeeper");
                assertNoLostUpdates(context);
              });
    }
  }

  @Test
  void overTheApplicationsLettuceConnectionFactory() {
    URI server = URI.create(TestRedis.uri());
    List<ConnectedEvent> connected = new CopyOnWriteArrayList<>();
    runner
        .withConfiguration(AutoConfigurations.of(RedisAutoConfiguration.class))
        // The application's own Lettuce resources, watched from before any connection is made.
        .withBean(
            ClientResources.class,
            () -> {
              ClientResources resources = DefaultClientResources.create();
              resources
                  .eventBus()
                  .get()
                  .filter(ConnectedEvent.class::isInstance)
                  .cast(ConnectedEvent.class)
                  .subscribe(connected::add);
              return resources;
            },
            definition -> definition.setDestroyMethodName("shutdown"))
        .withPropertyValues(
            "spring.data.redis.host=" + server.getHost(),
            "spring.data.redis.port=" + server.getPort(),
            "spring.data.redis.database=5",
            "dlock.backend-bean=lettuce-connection-factory")
        .run(
            context -> {
              LockClient locks = context.getBean(LockClient.class);
              assertThat(locks.backendName()).isEqualTo("redis");
              // dlock's two connections run on the application's resources; the factory itself
              // connects only on first use, which has not come yet.
              await()
                  .atMost(TestTiming.scaled(Duration.ofSeconds(10)))
                  .untilAsserted(() -> assertThat(connected).hasSize(2));
              assertNoLostUpdates(context);

              // The same server and database as the application's template sees.
              StringRedisTemplate template = context.getBean(StringRedisTemplate.class);
              String name = "factory-" + UUID.randomUUID();
              String key = RedisLockSettings.DEFAULT_KEY_PREFIX + "{" + name + "}";
              try (Lease lease = locks.lock(name).acquire(Duration.ofSeconds(5))) {
                assertThat(template.hasKey(key)).isTrue();
              }
              assertThat(template.hasKey(key)).isFalse();
            });
  }

  @Test
  void aConnectionFactoryThatCannotBeFollowedFailsTheStartUp() {
    runner
        .withBean(
            LettuceConnectionFactory.class,
            () -> new LettuceConnectionFactory(new RedisSocketConfiguration("/tmp/redis.sock")))
        .withPropertyValues("dlock.backend-bean=lettuce-connection-factory")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("RedisSocketConfiguration")
                    .hasMessageContaining("dlock.backend"));
  }

  @Test
  void severalBeansToLockOnFailTheStartUpUntilOneIsChosen() {
    URI server = URI.create(TestRedis.uri());
    ApplicationContextRunner both =
        runner
            .withConfiguration(AutoConfigurations.of(RedisAutoConfiguration.class))
            .withPropertyValues(
                "spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
                "dlock.jdbc.create-schema=true",
                "spring.data.redis.host=" + server.getHost(),
                "spring.data.redis.port=" + server.getPort());
    both.run(
        context ->
            assertThat(context)
                .getFailure()
                .rootCause()
                .hasMessageContaining("more than one bean it could lock on")
                .hasMessageContaining("LettuceConnectionFactory, DataSource")
                .hasMessageContaining("dlock.backend-bean"));
    both.withPropertyValues("dlock.backend-bean=data-source")
        .run(
            context ->
                assertThat(context.getBean(LockClient.class).backendName()).isEqualTo("jdbc"));
    both.withPropertyValues("dlock.backend-bean=lettuce-connection-factory")
        .run(
            context ->
                assertThat(context.getBean(LockClient.class).backendName()).isEqualTo("redis"));
    both.withPropertyValues("dlock.backend-bean=redis")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("dlock.backend-bean must be one of curator-framework"));
  }

  @Test
  void beansInjectionWouldNotPickDoNotCountAndAChosenMissingBeanIsNamed() {
    ApplicationContextRunner withSpare =
        runner
            .withPropertyValues(
                "spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID() + ";DB_CLOSE_DELAY=-1",
                "dlock.jdbc.create-schema=true")
            // Spring Boot's recipe for a second DataSource that does not take the first's place.
            .withBean(
                "spareDataSource",
                DataSource.class,
                () -> new DriverManagerDataSource("jdbc:h2:mem:" + UUID.randomUUID()),
                definition -> ((AbstractBeanDefinition) definition).setDefaultCandidate(false));
    withSpare.run(
        context -> assertThat(context.getBean(LockClient.class).backendName()).isEqualTo("jdbc"));
    withSpare
        .withPropertyValues("dlock.backend-bean=curator-framework")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("no single CuratorFramework bean"));
  }

  @Test
  void theBackendUriWinsOverExistingBeans() {
    runner
        .withPropertyValues(
            "spring.datasource.url=jdbc:h2:mem:" + UUID.randomUUID(),
            "dlock.backend=" + TestRedis.uri())
        .run(
            context ->
                assertThat(context.getBean(LockClient.class).backendName()).isEqualTo("redis"));
  }

  private static void assertNoLostUpdates(ApplicationContext context) throws Exception {
    Counter counter = context.getBean(Counter.class);
    String key = UUID.randomUUID().toString();
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        futures.add(
            pool.submit(
                () -> {
                  start.await();
                  for (int i = 0; i < 10; i++) {
                    counter.increment(key);
                  }
                  return null;
                }));
      }
      start.countDown();
      for (Future<?> f : futures) {
        f.get(TestTiming.scaled(Duration.ofSeconds(60)).toMillis(), TimeUnit.MILLISECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(counter.value()).isEqualTo(40);
  }

  @Configuration(proxyBeanMethods = false)
  static class CounterConfiguration {
    @Bean
    Counter counter() {
      return new Counter();
    }
  }

  /** A read-modify-write that only the lock makes safe. */
  public static class Counter {
    private final AtomicLong value = new AtomicLong();

    @Locked(name = "counter", key = "#key", waitTime = "30s")
    public void increment(String key) {
      long before = value.get();
      Thread.yield(); // widens the read-modify-write window, as a real read from a store would
      value.set(before + 1);
    }

    public long value() {
      return value.get();
    }
  }
}
