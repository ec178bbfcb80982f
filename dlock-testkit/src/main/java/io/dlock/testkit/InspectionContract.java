package io.dlock.testkit;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Inspection and forced release: listing locks shows the holder, and a forced release frees the
 * lock and tells the holder it was taken over.
 *
 * <p>A topic of {@link LockContractTest}, which every backend runs as one suite; extend that class;
 * do not implement this interface on its own.
 */
public interface InspectionContract {

  /** The fixture of the suite: clients, lock names and the backend's hooks. */
  ContractFixture fixture();

  @Test
  default void inspectionShowsTheHolderAndAForcedReleaseFreesTheLock() throws Exception {
    LockClient holderClient = fixture().newClient();
    LockClient admin = fixture().newClient();
    String lockName = fixture().name("inspected");
    List<io.dlock.LockInfo> none;
    try {
      none = admin.inspect(fixture().name("*"));
    } catch (UnsupportedOperationException e) {
      assumeTrue(false, "the backend cannot list its locks: " + e.getMessage());
      return;
    }
    assertThat(none).isEmpty();
    Lease held =
        holderClient
            .lock(lockName, LockOptions.defaults().withRenewedLease(millis(900)))
            .tryAcquire()
            .orElseThrow();
    List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
    held.onLost(lost::add);
    assertThat(admin.inspect(fixture().name("insp*")))
        .singleElement()
        .satisfies(
            info -> {
              assertThat(info.name()).isEqualTo(lockName);
              assertThat(info.fencingToken()).isEqualTo(held.fencingToken());
              assertThat(info.holds()).isEqualTo(1);
              assertThat(info.holder())
                  .contains(Long.toString(ProcessHandle.current().pid()))
                  .contains(Thread.currentThread().getName());
            });
    assertThat(admin.inspect(fixture().name("other*"))).isEmpty();

    Optional<io.dlock.LockInfo> broken = admin.forceRelease(lockName);
    assertThat(broken)
        .hasValueSatisfying(i -> assertThat(i.fencingToken()).isEqualTo(held.fencingToken()));
    assertThat(admin.forceRelease(lockName)).isEmpty();
    await().atMost(millis(3000)).until(() -> !lost.isEmpty());
    assertThat(lost.get(0).reason()).isEqualTo(LeaseLostEvent.Reason.TAKEN_OVER);
    assertThat(admin.lock(lockName).tryAcquire()).isPresent();
  }
}
