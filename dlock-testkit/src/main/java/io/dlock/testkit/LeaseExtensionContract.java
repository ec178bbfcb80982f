package io.dlock.testkit;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LockClient;
import io.dlock.LockLostException;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * {@link Lease#extend}: the server keeps the lock for the new lease, checked against the owner and
 * the grant there; an extension of a lost lease is refused and reported; an unreachable server is
 * reported, not waited for.
 *
 * <p>A topic of {@link LockContractTest}, which every backend runs as one suite; extend that class;
 * do not implement this interface on its own.
 */
public interface LeaseExtensionContract {

  /** The fixture of the suite: clients, lock names and the backend's hooks. */
  ContractFixture fixture();

  @Test
  default void anExtendedFixedLeaseKeepsTheLockPastItsFirstEnd() {
    LockClient holder = fixture().newClient();
    LockClient other = fixture().newClient();
    String lockName = fixture().name("extended");
    Lease lease =
        fixture()
            .grantShortLease(holder, lockName, LockOptions.defaults().withFixedLease(millis(600)));

    lease.extend(millis(6000));

    assertThat(lease.remaining()).isGreaterThan(millis(3000));
    // Past the first lease's end, and then some, the lock is still this holder's.
    await()
        .during(millis(1500))
        .atMost(millis(4000))
        .until(() -> other.lock(lockName).tryAcquire().isEmpty());
    assertThat(lease.isValid()).isTrue();
    assertThat(lease.release()).isTrue();
    assertThat(other.lock(lockName).tryAcquire()).isPresent();
  }

  @Test
  default void anExtendedRenewedLeaseStaysValidAndIsReleasedAsUsual() {
    LockClient holder = fixture().newClient();
    String lockName = fixture().name("extended-renewed");
    Lease lease =
        holder
            .lock(lockName, LockOptions.defaults().withRenewedLease(millis(600)))
            .tryAcquire()
            .orElseThrow();

    lease.extend(millis(5000));

    assertThat(lease.remaining()).isGreaterThan(millis(2500));
    await().during(millis(1000)).atMost(millis(3000)).until(lease::isValid);
    assertThat(lease.release()).isTrue();
    assertThat(fixture().newClient().lock(lockName).tryAcquire()).isPresent();
  }

  @Test
  default void extendingALostLeaseIsRefusedAndTheLossReported() {
    LockClient holder = fixture().newClient();
    String lockName = fixture().name("extend-lost");
    Lease lease =
        holder
            .lock(lockName, LockOptions.defaults().withRenewedLease(millis(3000)))
            .tryAcquire()
            .orElseThrow();
    List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
    lease.onLost(lost::add);

    fixture().deleteLockOnServer(lockName);

    assertThatThrownBy(() -> lease.extend(millis(10_000)))
        .isInstanceOf(LockLostException.class)
        .hasMessageContaining(lockName);
    await().atMost(millis(2000)).until(() -> lost.size() == 1);
    assertThat(lost.get(0).fencingToken()).isEqualTo(lease.fencingToken());
    assertThat(lease.isValid()).isFalse();
    assertThat(lease.release()).isFalse();
  }

  @Test
  default void extendingWhenTheServerCannotBeReachedIsReportedWithinTheBound() {
    LockClient holder =
        fixture()
            .newClient(
                io.dlock.LockClientOptions.defaults().withOperationTimeout(Duration.ofSeconds(1)));
    String lockName = fixture().name("extend-cut");
    Lease lease = holder.lock(lockName).tryAcquire().orElseThrow();
    fixture().lastBackend().cut();

    long start = System.nanoTime();
    assertThatThrownBy(() -> lease.extend(millis(10_000)))
        .isInstanceOf(BackendUnavailableException.class);
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(millis(5000));
    fixture().lastBackend().restore();
    lease.release();
  }
}
