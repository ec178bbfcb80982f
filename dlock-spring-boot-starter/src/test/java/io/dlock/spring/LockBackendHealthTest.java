package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.spring.autoconfigure.DlockActuatorAutoConfiguration;
import io.dlock.spring.autoconfigure.DlockAutoConfiguration;
import io.dlock.testkit.TestTiming;
import io.dlock.testkit.server.RedisServerProcess;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.springframework.boot.actuate.autoconfigure.health.HealthContributorAutoConfiguration;
import org.springframework.boot.actuate.autoconfigure.health.HealthEndpointAutoConfiguration;
import org.springframework.boot.actuate.health.HealthEndpoint;
import org.springframework.boot.actuate.health.Status;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The health indicator follows the backend: DOWN when its server stops, UP when it is back. */
class LockBackendHealthTest {

  @Test
  void downWhenTheBackendStopsAndUpWhenItIsBack() {
    try (RedisServerProcess redis = RedisServerProcess.start()) {
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  DlockAutoConfiguration.class,
                  DlockActuatorAutoConfiguration.class,
                  HealthContributorAutoConfiguration.class,
                  HealthEndpointAutoConfiguration.class))
          .withPropertyValues(
              "dlock.backend=" + redis.uri(),
              "dlock.operation-timeout=1s",
              "dlock.backend-properties.commandTimeout=PT1S")
          .run(
              context -> {
                HealthEndpoint health = context.getBean(HealthEndpoint.class);
                assertThat(health.healthForPath("dlock").getStatus()).isEqualTo(Status.UP);

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
}
