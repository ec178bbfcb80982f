package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.BackendUnavailableException;
import io.dlock.LockClient;
import io.dlock.spring.autoconfigure.DlockActuatorAutoConfiguration;
import io.dlock.spring.autoconfigure.DlockAutoConfiguration;
import io.dlock.testkit.TestTiming;
import io.dlock.testkit.server.RedisServerProcess;
import java.time.Duration;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.postgresql.ds.PGSimpleDataSource;
import org.springframework.boot.actuate.autoconfigure.health.HealthContributorAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.health.HealthEndpointAutoConfiguration;
import org.springframework.boot.actuate.health.HealthEndpoint;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * The health indicator follows the backend: DOWN while its server is away, UP when it is back.
 *
 * <p>Issue 30, item 4: an application whose lock server is down at start-up starts, as it would
 * with Spring Data Redis: its health check reports DOWN, lock calls fail with {@link
 * BackendUnavailableException} within their bound, and locks work once the server runs, without a
 * restart. {@code dlock.fail-fast=true} keeps a start that fails instead.
 */
class StartWithoutBackendTest {
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  DlockAutoConfiguration.class,
                  DlockActuatorAutoConfiguration.class,
                  HealthContributorAutoConfiguration.class,
                  HealthEndpointAutoConfiguration.class))
          .withPropertyValues("dlock.operation-timeout=500ms");

  @Test
  void aRedisServerDownAtStartIsHealthDownUntilItRunsAndThenLocks() {
    try (RedisServerProcess redis = RedisServerProcess.start()) {
      redis.kill();
      runner
          .withPropertyValues("dlock.backend=" + redis.uri())
          .run(
              context -> {
                assertThat(context).hasNotFailed();
                HealthEndpoint health = context.getBean(HealthEndpoint.class);
                assertThat(health.healthForPath("dlock").getStatus()).isEqualTo(Status.DOWN);
                LockClient client = context.getBean(LockClient.class);
                assertThatThrownBy(() -> client.lock("order-1").tryAcquire())
                    .isInstanceOf(BackendUnavailableException.class);

                redis.restart();

                await()
                    .atMost(TestTiming.scaled(Duration.ofSeconds(15)))
                    .until(() -> health.healthForPath("dlock").getStatus().equals(Status.UP));
                assertThat(client.lock("order-1").tryAcquire()).isPresent();
              });
    }
  }

  @Test
  void healthIsDownWhenTheServerStopsAndUpWhenItIsBack() {
    try (RedisServerProcess redis = RedisServerProcess.start()) {
      runner
          .withPropertyValues(
              "dlock.backend=" + redis.uri(), "dlock.backend-properties.commandTimeout=PT1S")
          .run(
              context -> {
                HealthEndpoint health = context.getBean(HealthEndpoint.class);
                // UP once connected: on a loaded machine the start may not have waited long enough.
                await()
                    .atMost(TestTiming.scaled(Duration.ofSeconds(15)))
                    .until(() -> health.healthForPath("dlock").getStatus().equals(Status.UP));

                redis.kill();
                await()
                    .atMost(TestTiming.scaled(Duration.ofSeconds(15)))
                    .until(() -> health.healthForPath("dlock").getStatus().equals(Status.DOWN));

                redis.restart();
                await()
                    .atMost(TestTiming.scaled(Duration.ofSeconds(30)))
                    .until(() -> health.healthForPath("dlock").getStatus().equals(Status.UP));
              });
    }
  }

  @Test
  void failFastKeepsAStartThatFails() {
    int port = RedisServerProcess.freePort();
    runner
        .withPropertyValues("dlock.backend=redis://127.0.0.1:" + port, "dlock.fail-fast=true")
        .run(
            context ->
                assertThat(context)
                    .hasFailed()
                    .getFailure()
                    .hasRootCauseInstanceOf(java.net.ConnectException.class));
  }

  @Test
  void aDatabaseDownAtStartIsHealthDownAndItsLockCallsUnavailable() {
    PGSimpleDataSource down = new PGSimpleDataSource();
    down.setURL("jdbc:postgresql://127.0.0.1:" + RedisServerProcess.freePort() + "/app");
    down.setUser("app");
    down.setConnectTimeout(1);
    runner
        .withBean(DataSource.class, () -> down)
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              HealthEndpoint health = context.getBean(HealthEndpoint.class);
              assertThat(health.healthForPath("dlock").getStatus()).isEqualTo(Status.DOWN);
              LockClient client = context.getBean(LockClient.class);
              assertThat(client.backendName()).isEqualTo("jdbc");
              assertThatThrownBy(() -> client.lock("order-1").tryAcquire())
                  .isInstanceOf(BackendUnavailableException.class);
            });
  }
}
