package io.dlock.testkit;

import io.dlock.spi.LockBackend;
import io.dlock.spi.ReleaseSignals;
import java.util.Optional;

/**
 * The contract suite against a backend that cannot signal releases: the core must fall back to
 * capped exponential backoff and still meet every clause (waits, hand-offs, storms).
 */
class PollingInMemoryLockContractTest extends InMemoryLockContractTest {

  @Override
  protected LockBackend newBackend() {
    return new ForwardingLockBackend(super.newBackend()) {
      @Override
      public Optional<ReleaseSignals> releaseSignals() {
        return Optional.empty(); // never signals: waiters back off and retry
      }
    };
  }
}
