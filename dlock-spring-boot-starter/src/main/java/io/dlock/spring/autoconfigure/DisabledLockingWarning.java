package io.dlock.spring.autoconfigure;

import io.dlock.spring.LeaderOnly;
import io.dlock.spring.Locked;
import io.dlock.spring.LockedMethods;
import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.util.Map;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

/**
 * With {@code dlock.enabled=false}, says at start-up, as a warning, that the starter is off and
 * which {@code @Locked} methods now run without their lock: they are called as plain methods, and
 * nothing else would show it (50 concurrent increments of a locked counter ended at 1); and which
 * {@code @LeaderOnly} methods now run on every instance.
 */
final class DisabledLockingWarning implements SmartInitializingSingleton {
  private static final Logger log = LoggerFactory.getLogger(DisabledLockingWarning.class);

  private final ConfigurableListableBeanFactory beans;

  DisabledLockingWarning(ConfigurableListableBeanFactory beans) {
    this.beans = beans;
  }

  @Override
  public void afterSingletonsInstantiated() {
    TreeSet<String> methods = annotatedMethods(Locked.class);
    TreeSet<String> leaderOnly = annotatedMethods(LeaderOnly.class);
    if (!leaderOnly.isEmpty()) {
      log.warn(
          "dlock.enabled=false: these {} @LeaderOnly methods run on EVERY instance, not only on the"
              + " leader: {}",
          leaderOnly.size(),
          String.join(", ", leaderOnly));
    }
    if (methods.isEmpty()) {
      log.warn(
          "dlock.enabled=false: the dlock starter is off (no LockClient, no @Locked locking, no"
              + " ShedLock or Spring Integration adapter)");
      return;
    }
    log.warn(
        "dlock.enabled=false: these {} @Locked methods run WITHOUT their lock, concurrently on"
            + " every thread and instance: {}",
        methods.size(),
        String.join(", ", methods));
  }

  /**
   * {@code Type.method(ParameterTypes)} of every method of the beans annotated with {@code type}.
   */
  TreeSet<String> annotatedMethods(Class<? extends Annotation> annotation) {
    TreeSet<String> found = new TreeSet<>();
    for (String name : beans.getBeanDefinitionNames()) {
      Class<?> type = UnknownPropertiesCheck.typeOf(beans, name);
      if (type == null) {
        continue;
      }
      Class<?> user = ClassUtils.getUserClass(type);
      Map<Method, Boolean> annotated;
      try {
        annotated =
            MethodIntrospector.selectMethods(
                user,
                (MethodIntrospector.MetadataLookup<Boolean>)
                    method ->
                        AnnotatedElementUtils.hasAnnotation(method, annotation) ? true : null);
      } catch (RuntimeException | LinkageError e) {
        continue; // a class whose methods cannot be read (a missing optional type) has none
      }
      annotated.keySet().forEach(method -> found.add(LockedMethods.describe(method, user)));
    }
    return found;
  }
}
