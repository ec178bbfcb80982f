package io.dlock.jdbc;

import java.lang.reflect.Method;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.commons.support.AnnotationSupport;
import org.junit.platform.commons.support.HierarchyTraversalMode;

/**
 * Which tests of an {@code EmbeddedPostgres<Mode>ContractTest} run. With {@code
 * DLOCK_TEST_POSTGRES_URL} set, {@code Postgres<Mode>ContractTest} runs the whole suite on that
 * server, and the embedded one runs a smoke: a grant and its release, which prove the path a bare
 * machine takes (binaries from Maven Central, started as an unprivileged user when run as root),
 * and the tests that need a server the test can stop, which only the embedded one is. Without the
 * variable the class is skipped: {@code Postgres<Mode>ContractTest} runs the whole suite on an
 * embedded server, stopping it too.
 */
final class EmbeddedPostgresSmoke implements ExecutionCondition {
  /** The tests of the smoke, by name: the contract suite's methods. */
  static final Set<String> SMOKE =
      Set.of(
          // A grant and its release.
          "releasingTwiceIsANoOpThatSaysSo",
          // Skipped without a server to stop.
          "stoppedServerGivesBackendUnavailableWithinTheWait",
          // Stops the server; on an external one it cuts the client's link instead.
          "lostNoticeFiresWhenTheServerIsGone");

  @Override
  public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
    Class<?> testClass = context.getRequiredTestClass();
    String wholeSuite = testClass.getSimpleName().replaceFirst("^Embedded", "");
    if (TestDatabases.externalPostgres().isEmpty()) {
      return ConditionEvaluationResult.disabled(
          wholeSuite + " already runs the whole suite on an embedded PostgreSQL");
    }
    Optional<Method> method = context.getTestMethod();
    if (method.isEmpty()) {
      requireSmokeIn(testClass);
      return ConditionEvaluationResult.enabled("the smoke of the embedded PostgreSQL");
    }
    return SMOKE.contains(method.get().getName())
        ? ConditionEvaluationResult.enabled("in the smoke of the embedded PostgreSQL")
        : ConditionEvaluationResult.disabled(
            wholeSuite
                + " runs it on the external PostgreSQL; the embedded one runs the smoke only");
  }

  /** Fails the class if a test of the smoke is gone (renamed), rather than run less unseen. */
  private static void requireSmokeIn(Class<?> testClass) {
    Set<String> tests =
        AnnotationSupport.findAnnotatedMethods(
                testClass, Test.class, HierarchyTraversalMode.TOP_DOWN)
            .stream()
            .map(Method::getName)
            .collect(Collectors.toSet());
    if (!tests.containsAll(SMOKE)) {
      throw new IllegalStateException(
          "the smoke of the embedded PostgreSQL names tests that "
              + testClass.getSimpleName()
              + " does not have: "
              + SMOKE.stream().filter(t -> !tests.contains(t)).toList());
    }
  }
}
