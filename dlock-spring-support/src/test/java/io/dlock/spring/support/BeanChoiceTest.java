package io.dlock.spring.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Clock;
import java.util.List;
import java.util.concurrent.ForkJoinPool;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.support.DefaultListableBeanFactory;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.mock.env.MockEnvironment;

/**
 * The choice among kinds of beans, on bean definitions alone (nothing is created): the lock
 * starter's mode, in which several beans of a kind without a primary do not count, and the stricter
 * one of a component that backs off when it finds none.
 */
class BeanChoiceTest {
  private static final BeanChoice.Kind EXECUTOR =
      new BeanChoice.Kind("executor", "java.util.concurrent.Executor", List.of());
  private static final BeanChoice.Kind CLOCK =
      new BeanChoice.Kind("clock", "java.time.Clock", List.of());
  private static final BeanChoice.Kind ABSENT =
      new BeanChoice.Kind("absent", "java.time.Clock", List.of("com.example.NotOnTheClassPath"));

  private static final BeanChoice CHOICE =
      BeanChoice.of(
          "app.bean", "build on", "define a Thing bean", List.of(EXECUTOR, CLOCK, ABSENT));

  private final DefaultListableBeanFactory beans = new DefaultListableBeanFactory();
  private final MockEnvironment environment = new MockEnvironment();

  @Test
  void severalOfAKindDoNotCountUnlessThatIsAmbiguousAndAPrimaryResolvesThem() {
    beans.registerBeanDefinition("first", new RootBeanDefinition(ForkJoinPool.class));
    beans.registerBeanDefinition("second", new RootBeanDefinition(ForkJoinPool.class));

    assertThat(CHOICE.candidates(beans, null)).isEmpty();
    assertThat(CHOICE.problem(beans, null, environment)).isNull();
    assertThat(CHOICE.severalOfAKindAreAmbiguous().problem(beans, null, environment))
        .isEqualTo(
            "dlock found 2 Executor beans (first, second) it could build on, none of them"
                + " @Primary: mark the one to use @Primary, or define a Thing bean");

    beans.getBeanDefinition("second").setPrimary(true);
    assertThat(CHOICE.candidates(beans, null)).containsExactly(EXECUTOR);
    assertThat(CHOICE.severalOfAKindAreAmbiguous().problem(beans, null, environment)).isNull();
  }

  @Test
  void twoKindsAreAChoiceToMakeByTheProperty() {
    beans.registerBeanDefinition("pool", new RootBeanDefinition(ForkJoinPool.class));
    beans.registerSingleton("clock", Clock.systemUTC());

    assertThat(CHOICE.candidates(beans, null)).containsExactly(EXECUTOR, CLOCK);
    assertThat(CHOICE.problem(beans, null, environment))
        .isEqualTo(
            "dlock found more than one bean it could build on (Executor, Clock): set app.bean to"
                + " one of executor, clock, or define a Thing bean");

    environment.setProperty("app.bean", "clock");
    assertThat(CHOICE.problem(beans, null, environment)).isNull();
    assertThat(CHOICE.chosen(environment)).isEqualTo(CLOCK);

    // A kind whose classes are missing is never a candidate, even when chosen.
    environment.setProperty("app.bean", "absent");
    assertThat(CHOICE.problem(beans, null, environment))
        .startsWith("app.bean=absent, but the application has no single Clock bean");

    environment.setProperty("app.bean", "clocks");
    assertThatThrownBy(() -> CHOICE.chosen(environment))
        .hasMessage("app.bean must be one of executor, clock, absent, but was 'clocks'");
  }

  @Test
  void beansInjectionSkipsDoNotCount() {
    beans.registerBeanDefinition("pool", new RootBeanDefinition(ForkJoinPool.class));
    RootBeanDefinition spare = new RootBeanDefinition(ForkJoinPool.class);
    spare.setDefaultCandidate(false);
    beans.registerBeanDefinition("spare", spare);
    RootBeanDefinition fallback = new RootBeanDefinition(ForkJoinPool.class);
    fallback.setFallback(true);
    beans.registerBeanDefinition("fallback", fallback);

    assertThat(BeanChoice.resolvesToOne(beans, java.util.concurrent.Executor.class)).isTrue();
    assertThat(CHOICE.severalOfAKindAreAmbiguous().problem(beans, null, environment)).isNull();
  }
}
