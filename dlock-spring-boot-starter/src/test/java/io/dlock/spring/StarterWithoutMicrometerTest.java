package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.LockClient;
import io.dlock.spring.autoconfigure.DlockAutoConfiguration;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.util.ClassUtils;

/**
 * The starter in an application without Micrometer: it starts, {@code @Locked} works, and no
 * metrics bean is made. Run by its own surefire execution, whose class path lacks micrometer-core
 * (the pom's {@code without-micrometer}); the default run skips it.
 */
class StarterWithoutMicrometerTest {

  @Test
  void startsAndLocksWithoutMicrometerOnTheClassPath() {
    // Only in that execution (a -Dtest run of the default one would find Micrometer): there the
    // class path must lack it, so a broken exclusion fails rather than passes.
    assumeTrue(Boolean.getBoolean("dlock.test.withoutMicrometer"));
    assertThat(
            ClassUtils.isPresent(
                "io.micrometer.core.instrument.MeterRegistry", getClass().getClassLoader()))
        .as("this test runs without micrometer-core (surefire execution without-micrometer)")
        .isFalse();
    new ApplicationContextRunner()
        .withConfiguration(
            AutoConfigurations.of(AopAutoConfiguration.class, DlockAutoConfiguration.class))
        .withPropertyValues(
            "dlock.backend=" + TestRedis.uri(), "dlock.key-prefix=no-meters-" + UUID.randomUUID())
        .withUserConfiguration(Beans.class)
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context.containsBean("dlockLockMetrics")).isFalse();
              assertThat(context.getBean(LockClient.class).backendName()).isEqualTo("redis");
              Work work = context.getBean(Work.class);
              assertThat(work.run()).isEqualTo(1);
              assertThat(work.run()).isEqualTo(2);
            });
  }

  @Configuration(proxyBeanMethods = false)
  static class Beans {
    @Bean
    Work work() {
      return new Work();
    }
  }

  public static class Work {
    private final AtomicInteger runs = new AtomicInteger();

    @Locked(name = "work")
    public int run() {
      assertThat(LockedMethodContext.currentFencingToken()).isPositive();
      return runs.incrementAndGet();
    }
  }
}
