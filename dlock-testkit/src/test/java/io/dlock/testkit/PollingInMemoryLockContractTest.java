package io.dlock.testkit;

import io.dlock.spi.AcquireResult;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LockBackend;
import io.dlock.spi.ReleaseListener;
import io.dlock.spi.ReleaseResult;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The contract suite against a backend that cannot signal releases: the core must fall back to
 * capped exponential backoff and still meet every clause (waits, hand-offs, storms).
 */
class PollingInMemoryLockContractTest extends InMemoryLockContractTest {

  @Override
  protected LockBackend newBackend() {
    LockBackend shared = super.newBackend();
    return new LockBackend() {
      @Override
      public String name() {
        return "in-memory-polling";
      }

      @Override
      public CompletableFuture<AcquireResult> tryAcquire(String n, String o, Duration l) {
        return shared.tryAcquire(n, o, l);
      }

      @Override
      public CompletableFuture<ReleaseResult> release(String n, String o) {
        return shared.release(n, o);
      }

      @Override
      public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
        return shared.renew(leases);
      }

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

      @Override
      public void close() {
        shared.close();
      }
    };
  }
}
