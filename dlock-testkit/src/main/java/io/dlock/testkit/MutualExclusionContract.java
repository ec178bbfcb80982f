package io.dlock.testkit;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.DistributedLock;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReadWriteLock;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.junit.jupiter.api.Test;

/**
 * Mutual exclusion and fencing: never two holders at once, across threads and clients, and fencing
 * tokens that only ever grow, including after a lease expired and after the lock was deleted on the
 * server.
 *
 * <p>A topic of {@link LockContractTest}, which every backend runs as one suite; extend that class;
 * do not implement this interface on its own.
 */
public interface MutualExclusionContract {

  /** The fixture of the suite: clients, lock names and the backend's hooks. */
  ContractFixture fixture();

  @Test
  default void mutualExclusionAcrossThreadsAndClients() throws Exception {
    List<LockClient> pair = List.of(fixture().newClient(), fixture().newClient());
    String lockName = fixture().name("counter");
    int threads = 16;
    int rounds = 40;
    int[] counter = {0};
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        DistributedLock lock = pair.get(t % 2).lock(lockName);
        futures.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < rounds; i++) {
                    try (Lease lease = lock.acquire(millis(30_000))) {
                      if (inside.incrementAndGet() != 1) {
                        overlaps.incrementAndGet();
                      }
                      int read = counter[0];
                      Thread.yield(); // widen the read-modify-write window
                      counter[0] = read + 1;
                      inside.decrementAndGet();
                    }
                  }
                  return null;
                }));
      }
      for (Future<?> f : futures) {
        f.get(120, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(overlaps).hasValue(0);
    assertThat(counter[0]).isEqualTo(threads * rounds);
  }

  /**
   * Ten thousand grants, on eight names at once: each name's grants follow one another, so each
   * name's tokens must rise strictly, while the other names draw tokens beside it (the names run
   * concurrently only to spend the round trips in parallel). Every name also sees grants that
   * expire unreleased and its lock deleted on the server behind everyone's back.
   */
  @Test
  default void fencingTokensStrictlyIncreaseOverTenThousandGrantsIncludingAfterExpiry()
      throws Exception {
    LockClient client = fixture().newClient();
    LockClient abandoning = fixture().newClient();
    int names = 8;
    int expiryEvery = 400; // every 400th grant of a name is left to expire
    // A deletion behind everyone's back runs while no other name's call is in flight: H2 2.3
    // reads INFORMATION_SCHEMA.SESSIONS (row mode's forced release) with an internal error while
    // other sessions commit. The grants of the eight names still overlap one another.
    ReadWriteLock alone = new ReentrantReadWriteLock();
    ExecutorService pool = Executors.newFixedThreadPool(names);
    try {
      List<Future<Integer>> expiries = new ArrayList<>();
      for (int n = 0; n < names; n++) {
        String lockName = fixture().name("fence-" + n);
        expiries.add(
            pool.submit(
                () ->
                    grantInTurn(client, abandoning, lockName, 10_000 / names, expiryEvery, alone)));
      }
      for (Future<Integer> perName : expiries) {
        assertThat(perName.get(10, TimeUnit.MINUTES)).isEqualTo(10_000 / names / expiryEvery);
      }
    } finally {
      pool.shutdownNow();
    }
  }

  /** {@code grants} grants of one name in turn, checking its tokens; returns the expiries seen. */
  private int grantInTurn(
      LockClient client,
      LockClient abandoning,
      String lockName,
      int grants,
      int expiryEvery,
      ReadWriteLock alone) {
    DistributedLock lock = client.lock(lockName);
    LockOptions shortLived = LockOptions.defaults().withFixedLease(millis(400));
    long last = Long.MIN_VALUE;
    int expiries = 0;
    for (int i = 0; i < grants; i++) {
      long token;
      if (i % expiryEvery == expiryEvery - 1) {
        // A grant that is never released: the next grant comes only after it expires.
        alone.readLock().lock();
        try {
          Lease abandoned = fixture().grantShortLease(abandoning, lockName, shortLived);
          token = abandoned.fencingToken();
          assertThat(token).isGreaterThan(last);
          last = token;
          try (Lease afterExpiry = lock.acquire(millis(5_000))) {
            token = afterExpiry.fencingToken();
          }
          assertThat(abandoned.release()).as("release after expiry is a no-op").isFalse();
        } finally {
          alone.readLock().unlock();
        }
        expiries++;
      } else if (i % 625 == 312) {
        // The lock key deleted behind everyone's back: the counter must still go on.
        Lease lease;
        alone.readLock().lock();
        try {
          lease = lock.tryAcquire().orElseThrow();
        } finally {
          alone.readLock().unlock();
        }
        assertThat(lease.fencingToken()).isGreaterThan(last);
        last = lease.fencingToken();
        alone.writeLock().lock();
        try {
          fixture().deleteLockOnServer(lockName);
        } finally {
          alone.writeLock().unlock();
        }
        alone.readLock().lock();
        try {
          lease.close();
          token = lock.tryAcquire().map(l -> closeAndGetToken(l)).orElseThrow();
        } finally {
          alone.readLock().unlock();
        }
      } else {
        alone.readLock().lock();
        try (Lease lease = lock.tryAcquire().orElseThrow()) {
          token = lease.fencingToken();
        } finally {
          alone.readLock().unlock();
        }
      }
      assertThat(token).as("%s: grant %d", lockName, i).isGreaterThan(last);
      last = token;
    }
    return expiries;
  }

  private static long closeAndGetToken(Lease lease) {
    lease.close();
    return lease.fencingToken();
  }
}
