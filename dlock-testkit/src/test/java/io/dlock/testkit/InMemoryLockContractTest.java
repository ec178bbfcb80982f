package io.dlock.testkit;

import io.dlock.BackendUnavailableException;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockOwner;
import io.dlock.spi.ReleaseListener;
import io.dlock.spi.ReleaseResult;
import io.dlock.spi.ReleaseSignals;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/** The contract suite against the in-memory backend: tests the core algorithm without a server. */
class InMemoryLockContractTest extends LockContractTest {
  private final InMemoryLockBackend server = new InMemoryLockBackend();

  @Override
  protected LockBackend newBackend() {
    return server.sharedView();
  }

  @Override
  protected LockBackend newBackendForUnreachableServer() {
    final class Unreachable implements LockBackend, ReleaseSignals {
      private <T> CompletableFuture<T> down() {
        return CompletableFuture.failedFuture(new BackendUnavailableException("no server"));
      }

      @Override
      public String name() {
        return "unreachable";
      }

      @Override
      public CompletableFuture<AcquireResult> tryAcquire(String n, LockOwner o, Duration l) {
        return down();
      }

      @Override
      public CompletableFuture<ReleaseResult> release(String n, LockOwner o, long t) {
        return down();
      }

      @Override
      public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
        return down();
      }

      @Override
      public Optional<ReleaseSignals> releaseSignals() {
        return Optional.of(this);
      }

      @Override
      public CompletableFuture<Void> watchReleases(String n, ReleaseListener r) {
        return down();
      }

      @Override
      public void unwatchReleases(String n) {}

      @Override
      public void close() {}
    }
    return new Unreachable();
  }

  @Override
  protected void deleteLockOnServer(String name) {
    server.delete(name);
  }
}
