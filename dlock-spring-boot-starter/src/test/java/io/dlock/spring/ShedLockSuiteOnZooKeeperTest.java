package io.dlock.spring;

import net.javacrumbs.shedlock.core.ExtensibleLockProvider;
import net.javacrumbs.shedlock.test.support.AbstractExtensibleLockProviderIntegrationTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * ShedLock's own provider suites on ZooKeeper: {@code
 * AbstractExtensibleLockProviderIntegrationTest}, which runs {@code
 * AbstractLockProviderIntegrationTest}'s tests too (it extends it).
 */
class ShedLockSuiteOnZooKeeperTest extends AbstractExtensibleLockProviderIntegrationTest {
  private static ShedLockSuiteBackend backend;

  @BeforeAll
  static void connect() {
    backend = new ShedLockSuiteBackend(ShedLockSuiteServers.zooKeeper());
  }

  @AfterAll
  static void close() {
    backend.close();
  }

  @Override
  protected ExtensibleLockProvider getLockProvider() {
    return backend.provider();
  }

  @Override
  protected void assertLocked(String lockName) {
    backend.assertLocked(lockName);
  }

  @Override
  protected void assertUnlocked(String lockName) {
    backend.assertUnlocked(lockName);
  }
}
