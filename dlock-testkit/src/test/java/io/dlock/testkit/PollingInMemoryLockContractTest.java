package io.dlock.testkit;

import io.dlock.spi.LockBackend;
import io.dlock.spi.ReleaseListener;
import java.util.concurrent.CompletableFuture;

/**
 * The contract suite against a backend that cannot signal releases: the core must fall back to
 * capped exponential backoff and still meet every clause (waits, hand-offs, storms).
 */
class PollingInMemoryLockContractTest extends InMemoryLockContractTest {

  @Override
  protected LockBackend newBackend() {
    return new ForwardingLockBackend(super.newBackend()) {
      @Override
      public CompletableFuture<Void> watchReleases(String n, ReleaseListener listener) {
        return CompletableFuture.completedFuture(null); // never signals
      }

      @Override
      public void unwatchReleases(String n) {}

      @Override
      public boolean signalsReleases() {
        return false;
      }
    };
  }
}
