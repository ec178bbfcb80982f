package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dlock.BackendCapability;
import io.dlock.DistributedLock;
import io.dlock.HeldLeaseInfo;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockInfo;
import io.dlock.LockInterruptedException;
import io.dlock.LockOptions;
import io.dlock.testkit.InMemoryLockBackend;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.Test;

/**
 * Regression (issue 29, finding 5): {@link LockAcquirer#acquireOwnGrant} (used by {@code
 * holdAtLeast}, the future methods and the ShedLock provider) cancels its future when interrupted;
 * when the grant completed it in between, the cancel returns false and the lease was dropped, held
 * and renewed with no holder until the client closed.
 */
class LockAcquirerInterruptTest {

  @Test
  void aGrantThatArrivesBetweenTheInterruptAndTheCancelIsReleased() {
    InMemoryLockBackend server = new InMemoryLockBackend();
    try (LockClient real = LockClients.create(server, LockClientOptions.defaults());
        LockClient other = LockClients.create(server.sharedView(), LockClientOptions.defaults())) {
      LockAcquirer acquirer =
          new LockAcquirer(new GrantBeforeCancel(real), new LockNamePatterns("app:"));
      Thread.currentThread().interrupt(); // get() throws at once: the grant is not there yet
      assertThatThrownBy(
              () ->
                  acquirer.acquireOwnGrant(
                      "job", null, Duration.ofSeconds(5), LockOptions.defaults()))
          .isInstanceOf(LockInterruptedException.class);
      assertThat(Thread.interrupted()).as("the interrupt flag is kept").isTrue();

      assertThat(real.heldLeases()).as("nothing held by the interrupted call").isEmpty();
      Optional<Lease> next = other.lock("app:job").tryAcquire();
      assertThat(next).as("the lock is free for others").isPresent();
      next.orElseThrow().release();
    }
  }

  /**
   * A client whose acquisition futures complete with the grant just before a cancel reaches them,
   * as when the grant's answer and an interrupt race: cancel then returns false.
   */
  private record GrantBeforeCancel(LockClient real) implements LockClient {
    @Override
    public io.dlock.LeasedSemaphore semaphore(String name, int permits, LockOptions options) {
      return real.semaphore(name, permits, options);
    }

    @Override
    public io.dlock.LeaderElection election(
        String name, LockOptions options, io.dlock.LeadershipListener listener) {
      return real.election(name, options, listener);
    }

    @Override
    public DistributedLock lock(String name) {
      return lock(name, LockOptions.defaults());
    }

    @Override
    public DistributedLock lock(String name, LockOptions options) {
      DistributedLock lock = real.lock(name, options);
      return new DistributedLock() {
        @Override
        public String name() {
          return lock.name();
        }

        @Override
        public LockOptions options() {
          return lock.options();
        }

        @Override
        public Optional<Lease> tryAcquire() {
          return lock.tryAcquire();
        }

        @Override
        public Lease acquire(Duration wait) {
          return lock.acquire(wait);
        }

        @Override
        public CompletableFuture<Lease> acquireAsync(Duration wait) {
          return new CompletableFuture<>() {
            @Override
            public boolean cancel(boolean mayInterruptIfRunning) {
              complete(lock.tryAcquire().orElseThrow());
              return super.cancel(mayInterruptIfRunning);
            }
          };
        }

        @Override
        public boolean isHeldByCurrentHolder() {
          return lock.isHeldByCurrentHolder();
        }

        @Override
        public Lock asLock() {
          return lock.asLock();
        }
      };
    }

    @Override
    public List<HeldLeaseInfo> heldLeases() {
      return real.heldLeases();
    }

    @Override
    public List<LockInfo> inspect(String namePattern) {
      return real.inspect(namePattern);
    }

    @Override
    public Optional<LockInfo> forceRelease(String name) {
      return real.forceRelease(name);
    }

    @Override
    public Set<BackendCapability> capabilities() {
      return real.capabilities();
    }

    @Override
    public String backendName() {
      return real.backendName();
    }

    @Override
    public void close() {
      real.close();
    }
  }
}
