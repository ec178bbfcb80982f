package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.spring.shedlock.DlockLockProvider;
import java.util.UUID;

/**
 * The adapter on one backend, for a class of ShedLock's provider suites: its own client, and names
 * of its own (ShedLock's suites use fixed names such as {@code lock1} and {@code name2}, and other
 * classes share the server). Whether a lock is held is asked of the server, through a second
 * client's inspection, never remembered here.
 */
final class ShedLockSuiteBackend implements AutoCloseable {
  private final String prefix = "shedlock-suite-" + UUID.randomUUID() + ":";
  private final LockClient client;
  private final LockClient observer;
  private final LockAcquirer acquirer;
  private final DlockLockProvider provider;

  ShedLockSuiteBackend(ShedLockSuiteServers.Backend backend) {
    LockClientOptions options = LockClientOptions.defaults();
    this.client = LockClients.connect(backend.uri(), backend.properties(), options);
    this.observer = LockClients.connect(backend.uri(), backend.properties(), options);
    this.acquirer = new LockAcquirer(client, new LockNamePatterns(prefix));
    this.provider = new DlockLockProvider(acquirer, options.operationTimeout());
  }

  DlockLockProvider provider() {
    return provider;
  }

  void assertLocked(String name) {
    assertThat(observer.inspect(prefix + name)).as("the server holds lock '%s'", name).hasSize(1);
  }

  void assertUnlocked(String name) {
    assertThat(observer.inspect(prefix + name)).as("the server holds no lock '%s'", name).isEmpty();
  }

  @Override
  public void close() {
    provider.close();
    acquirer.close();
    client.close();
    observer.close();
  }
}
