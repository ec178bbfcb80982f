package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.spring.autoconfigure.DlockAutoConfiguration;
import io.dlock.spring.autoconfigure.DlockChecksAutoConfiguration;
import io.dlock.testkit.InMemoryLockBackend;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.aop.support.AopUtils;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * {@code dlock.enabled=false} runs {@code @Locked} methods without their lock; the start-up says so
 * as a warning naming them, rather than nothing (50 concurrent increments then ended at 1).
 */
@ExtendWith(OutputCaptureExtension.class)
class DisabledLockingWarningTest {
  private static final String WARNING = "dlock.enabled=false";

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  AopAutoConfiguration.class,
                  DlockChecksAutoConfiguration.class,
                  DlockAutoConfiguration.class));

  @Test
  void theWarningNamesTheMethodsThatRunUnlocked(CapturedOutput output) {
    runner
        .withUserConfiguration(LockedBeans.class)
        .withPropertyValues("dlock.enabled=false")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              // Indeed unlocked: no advisor, so no proxy.
              assertThat(AopUtils.isAopProxy(context.getBean(Counter.class))).isFalse();
              assertThat(output.getOut().lines().filter(line -> line.contains(WARNING)))
                  .singleElement()
                  .asString()
                  .contains(" WARN ")
                  .contains(WARNING + ": these 2 @Locked methods run WITHOUT their lock")
                  .contains("Counter.increment()")
                  .contains("Counter.add(int)")
                  .doesNotContain("Counter.read()");
            });
  }

  @Test
  void theWarningNamesTheLeaderOnlyMethodsThatRunOnEveryInstance(CapturedOutput output) {
    runner
        .withBean(Reports.class)
        .withPropertyValues("dlock.enabled=false")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context.getBean(Reports.class).send()).isTrue(); // not skipped
              assertThat(output.getOut().lines().filter(line -> line.contains("@LeaderOnly")))
                  .singleElement()
                  .asString()
                  .contains(" WARN ")
                  .contains(WARNING + ": these 1 @LeaderOnly methods run on EVERY instance")
                  .contains("Reports.send()");
            });
  }

  @Test
  void withoutLockedMethodsTheWarningSaysTheStarterIsOff(CapturedOutput output) {
    runner
        .withPropertyValues("dlock.enabled=false")
        .run(
            context ->
                assertThat(output.getOut()).contains(WARNING + ": the dlock starter is off"));
  }

  @Test
  void noWarningWhenTheStarterIsOn(CapturedOutput output) {
    runner
        .withUserConfiguration(LockedBeans.class)
        .withBean(
            LockClient.class,
            () -> LockClients.create(new InMemoryLockBackend(), LockClientOptions.defaults()))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(AopUtils.isAopProxy(context.getBean(Counter.class))).isTrue();
              assertThat(output.getOut()).doesNotContain(WARNING);
            });
  }

  @Configuration(proxyBeanMethods = false)
  static class LockedBeans {
    @Bean
    Counter counter() {
      return new Counter();
    }
  }

  static class Reports {
    @LeaderOnly
    public boolean send() {
      return true;
    }
  }

  static class Counter {
    private int value;

    @Locked(name = "counter")
    public void increment() {
      value++;
    }

    @Locked(name = "counter")
    public void add(int delta) {
      value += delta;
    }

    public int read() {
      return value;
    }
  }
}
