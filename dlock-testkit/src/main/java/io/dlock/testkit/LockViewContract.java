package io.dlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dlock.Lease;
import io.dlock.LockClient;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.Test;

/**
 * The {@link Lock} view of a distributed lock: it behaves like a reentrant lock, with interruptible
 * and timed acquisition, and refuses conditions.
 *
 * <p>A topic of {@link LockContractTest}, which every backend runs as one suite; extend that class;
 * do not implement this interface on its own.
 */
public interface LockViewContract {

  /** The fixture of the suite: clients, lock names and the backend's hooks. */
  ContractFixture fixture();

  @Test
  default void lockViewBehavesLikeAReentrantLock() throws Exception {
    LockClient client = fixture().newClient();
    LockClient other = fixture().newClient();
    String lockName = fixture().name("view");
    Lock lock = client.lock(lockName).asLock();
    lock.lock();
    assertThat(lock.tryLock()).isTrue();
    assertThat(other.lock(lockName).tryAcquire()).isEmpty();
    lock.unlock();
    assertThat(other.lock(lockName).tryAcquire()).isEmpty();
    lock.unlock();
    assertThatThrownBy(lock::unlock).isInstanceOf(IllegalMonitorStateException.class);
    assertThatThrownBy(lock::newCondition)
        .isInstanceOf(UnsupportedOperationException.class)
        .hasMessageContaining("newCondition");
    Lease blocker = other.lock(lockName).tryAcquire().orElseThrow();
    assertThat(lock.tryLock(100, TimeUnit.MILLISECONDS)).isFalse();
    Thread.currentThread().interrupt();
    assertThatThrownBy(lock::lockInterruptibly).isInstanceOf(InterruptedException.class);
    assertThat(Thread.interrupted()).isFalse();
    blocker.release();
    assertThat(lock.tryLock(5, TimeUnit.SECONDS)).isTrue();
    lock.unlock();
  }
}
