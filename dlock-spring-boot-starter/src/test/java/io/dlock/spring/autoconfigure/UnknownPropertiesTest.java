package io.dlock.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

/**
 * Unknown {@code dlock.*} properties fail the start-up naming the closest known one; Spring's
 * relaxed spellings of known ones do not. No server: with {@code dlock.enabled=false} nothing
 * connects, and a failing check stops the start before anything would.
 */
class UnknownPropertiesTest {
  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  DlockChecksAutoConfiguration.class, DlockAutoConfiguration.class));

  @Test
  void aMisspelledBackendFailsTheStartNamingTheClosestProperty() {
    // Before the check, this fell back to the application's DataSource, or to "no backend".
    runner
        .withPropertyValues("dlock.backnd=redis://127.0.0.1:1")
        .run(
            context ->
                assertThat(failure(context))
                    .contains("unknown property dlock.backnd")
                    .contains("did you mean dlock.backend?"));
  }

  @Test
  void aMisspelledNestedPropertyNamesTheNestedOne() {
    runner
        .withPropertyValues("dlock.enabled=false", "dlock.jdbc.tabel=locks")
        .run(context -> assertThat(failure(context)).contains("did you mean dlock.jdbc.table?"));
  }

  @Test
  void theCheckRunsAlsoWithTheStarterOff() {
    runner
        .withPropertyValues("dlock.enabled=false", "dlock.wait-tme=1s")
        .run(
            context ->
                assertThat(failure(context))
                    .contains("unknown property dlock.wait-tme")
                    .contains("did you mean dlock.wait-time?"));
  }

  @Test
  void everyUnknownPropertyIsNamed() {
    runner
        .withPropertyValues("dlock.enabled=false", "dlock.lease-tim=1s", "dlock.keyprefx=a:")
        .run(
            context ->
                assertThat(failure(context))
                    .contains("did you mean dlock.lease-time?")
                    .contains("did you mean dlock.key-prefix?"));
  }

  @Test
  void relaxedSpellingsOfKnownPropertiesStart() {
    runner
        .withPropertyValues(
            "dlock.enabled=false",
            "dlock.waitTime=1s",
            "dlock.lease_time=10s",
            "dlock.backend-bean=data-source",
            "dlock.backend-properties.key-prefix=app2:",
            "dlock.backendProperties.commandTimeout=PT2S",
            "dlock.jdbc.createSchema=true",
            "dlock.zookeeper.root-path=/locks")
        .run(context -> assertThat(context).hasNotFailed());
  }

  @Test
  void idempotencyPropertiesNameTheirMissingModule() {
    // dlock-idempotency-web is not on this module's test class path.
    runner
        .withPropertyValues("dlock.enabled=false", "dlock.idempotency.header-name=X-Key")
        .run(
            context ->
                assertThat(failure(context))
                    .contains("dlock.idempotency.header-name")
                    .contains("dlock-idempotency-web, which is not on the class path"));
  }

  @Test
  void anotherDlockPropertiesBeanIsKnown() {
    ApplicationContextRunner withExtra =
        runner.withUserConfiguration(Extra.class).withPropertyValues("dlock.enabled=false");
    withExtra
        .withPropertyValues("dlock.extra.batch-size=3")
        .run(context -> assertThat(context).hasNotFailed());
    withExtra
        .withPropertyValues("dlock.extra.bacth-size=3")
        .run(
            context ->
                assertThat(failure(context)).contains("did you mean dlock.extra.batch-size?"));
  }

  @Test
  void systemPropertiesAreLeftAlone() {
    // As Spring's ignoreUnknownFields = false: JVM-wide settings are shared with other programs
    // (this module's own surefire sets dlock.test.withoutMicrometer).
    runner
        .withPropertyValues("dlock.enabled=false")
        .withSystemProperties("dlock.test.something-else=true")
        .run(context -> assertThat(context).hasNotFailed());
  }

  private static String failure(AssertableApplicationContext context) {
    assertThat(context).hasFailed();
    Throwable failure = context.getStartupFailure();
    while (failure.getCause() != null) {
      failure = failure.getCause();
    }
    return failure.getMessage();
  }

  @Configuration(proxyBeanMethods = false)
  @EnableConfigurationProperties(ExtraProperties.class)
  static class Extra {}

  @ConfigurationProperties("dlock.extra")
  static class ExtraProperties {
    private int batchSize = 1;

    public int getBatchSize() {
      return batchSize;
    }

    public void setBatchSize(int batchSize) {
      this.batchSize = batchSize;
    }
  }
}
