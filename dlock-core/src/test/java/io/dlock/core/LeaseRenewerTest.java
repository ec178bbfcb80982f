package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.LeaseLostEvent;
import io.dlock.LockClientOptions;
import io.dlock.LockOptions;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.HeldLease;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockOwner;
import io.dlock.spi.ReleaseResult;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The renewer never watches or renews a grant that has ended. */
class LeaseRenewerTest {

  /** Grants every request with a new token; renewals always succeed. */
  private static final class GrantingBackend implements LockBackend {
    private final AtomicLong tokens = new AtomicLong();

    @Override
    public String name() {
      return "granting";
    }

    @Override
    public CompletableFuture<AcquireResult> tryAcquire(
        String lockName, LockOwner owner, Duration lease) {
      return CompletableFuture.completedFuture(
          new AcquireResult.Granted(tokens.incrementAndGet(), 1));
    }

    @Override
    public CompletableFuture<ReleaseResult> release(
        String lockName, LockOwner owner, long fencingToken) {
      return CompletableFuture.completedFuture(ReleaseResult.RELEASED);
    }

    @Override
    public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
      return CompletableFuture.completedFuture(Set.of());
    }

    @Override
    public void close() {}
  }

  @Test
  void aGrantMarkedLostBeforeItReachesTheRenewerIsNeverWatched() {
    CoreLockClient client =
        (CoreLockClient) CoreLockClient.create(new GrantingBackend(), LockClientOptions.defaults());
    try {
      NamedLock lock = (NamedLock) client.lock("renewer", LockOptions.defaults());
      lock.tryAcquire().orElseThrow();
      Grant grant = client.grantOf(lock.grantKey());
      assertThat(client.renewedLeaseCount()).isEqualTo(1);

      // A session event marks the grant lost; then a late registration step adds it again.
      grant.markLost(LeaseLostEvent.Reason.SESSION_LOST, "test");
      assertThat(client.renewedLeaseCount()).isZero();
      client.renewer().add(grant);

      assertThat(client.renewedLeaseCount()).as("a lost grant is never renewed").isZero();
    } finally {
      client.close();
    }
  }
}
