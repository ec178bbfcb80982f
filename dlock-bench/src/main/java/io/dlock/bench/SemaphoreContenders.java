package io.dlock.bench;

import io.dlock.LeasedSemaphore;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import io.dlock.LockTimeoutException;
import io.dlock.Permit;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.redisson.api.RPermitExpirableSemaphore;
import org.redisson.api.RedissonClient;

/**
 * The killed-holder contenders: dlock's {@link LeasedSemaphore} on any backend (given how to
 * connect a client to an address), Redisson's {@link RPermitExpirableSemaphore} with a lease and
 * Curator's {@link InterProcessSemaphoreV2}. Redisson's {@code RSemaphore} is not among them: it
 * has no lease, so a dead holder's permits never come back by themselves.
 */
final class SemaphoreContenders {
  private SemaphoreContenders() {}

  /** dlock's semaphore with a renewed lease, over clients that {@code connect} makes. */
  record Dlock(
      String name,
      String bound,
      InetSocketAddress server,
      Function<String, LockClient> connect,
      Duration lease)
      implements SemaphoreContender {

    @Override
    public Participant participant(String semaphore, String address) {
      LockClient client = connect.apply(address);
      LeasedSemaphore permits =
          client.semaphore(semaphore, 1, LockOptions.defaults().withRenewedLease(lease));
      return new Participant() {
        private Permit held;

        @Override
        public boolean acquire(Duration wait) {
          try {
            held = permits.acquire(wait);
            return true;
          } catch (LockTimeoutException e) {
            return false;
          }
        }

        @Override
        public void close() {
          try {
            if (held != null) {
              held.release();
            }
          } catch (RuntimeException e) {
            // the killed holder: its permit is gone already, and so is its server
          }
          client.close();
        }
      };
    }
  }

  /**
   * Redisson's permit-expirable semaphore, each permit with a lease of {@code lease} (renewed
   * never).
   */
  record RedissonExpirable(String bound, InetSocketAddress server, Duration lease)
      implements SemaphoreContender {

    @Override
    public String name() {
      return "Redisson RPermitExpirableSemaphore";
    }

    @Override
    public Participant participant(String semaphore, String address) {
      RedissonClient client = RedisLockers.RedissonLocker.create("redis://" + address, 30_000);
      RPermitExpirableSemaphore permits =
          client.getPermitExpirableSemaphore("redisson-expirable-" + semaphore);
      permits.trySetPermits(1);
      return new Participant() {
        private String held;

        @Override
        public boolean acquire(Duration wait) throws InterruptedException {
          held = permits.tryAcquire(wait.toMillis(), lease.toMillis(), TimeUnit.MILLISECONDS);
          return held != null;
        }

        @Override
        public void close() {
          try {
            if (held != null) {
              permits.tryRelease(held);
            }
          } catch (RuntimeException e) {
            // the killed holder, cut off from its server
          }
          client.shutdown(0, 2, TimeUnit.SECONDS);
        }
      };
    }
  }

  /**
   * Curator's semaphore, each participant with a Curator client of its own as dlock's ZooKeeper
   * backend makes it (the same session and connection timeouts, the same retry policy).
   */
  record Curator(String bound, InetSocketAddress server, Duration session, Duration connection)
      implements SemaphoreContender {

    @Override
    public String name() {
      return "Curator InterProcessSemaphoreV2";
    }

    @Override
    public Participant participant(String semaphore, String address) throws InterruptedException {
      CuratorFramework client = ElectionContenders.curator(address, session, connection);
      InterProcessSemaphoreV2 permits =
          new InterProcessSemaphoreV2(client, "/bench-semaphore-kill/" + semaphore, 1);
      return new Participant() {
        private Lease held;

        @Override
        public boolean acquire(Duration wait) throws Exception {
          held = permits.acquire(wait.toMillis(), TimeUnit.MILLISECONDS);
          return held != null;
        }

        @Override
        public void close() {
          try {
            if (held != null) {
              held.close();
            }
          } catch (Exception e) {
            // the killed holder: its node went with its session
          }
          client.close();
        }
      };
    }
  }
}
