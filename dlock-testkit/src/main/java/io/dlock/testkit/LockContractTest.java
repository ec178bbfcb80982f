package io.dlock.testkit;

import io.dlock.Lease;
import io.dlock.LockClient;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Timeout;

/**
 * The contract every backend must meet, run against a real server. A backend's test extends this
 * class and supplies connections to its server; every timeout here scales with {@link TestTiming}.
 *
 * <p>The suite is one class to extend, written one topic a file: the hooks and the per-test set-up
 * are in {@link LockContractFixture}, the tests in the interfaces this class implements ({@link
 * MutualExclusionContract}, {@link ReentrancyContract}, {@link WaitingContract}, {@link
 * CancellationContract}, {@link LeaseContract}, {@link LeaseLossContract}, {@link
 * LeaseExtensionContract}, {@link BackendFailureContract}, {@link InputContract}, {@link
 * InspectionContract}, {@link LockViewContract}, {@link ElectionContract}, {@link
 * SemaphoreContract}), whose default {@code @Test} methods JUnit runs as this class's own.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
public abstract class LockContractTest extends LockContractFixture
    implements MutualExclusionContract,
        ReentrancyContract,
        WaitingContract,
        CancellationContract,
        LeaseContract,
        LeaseLossContract,
        LeaseExtensionContract,
        BackendFailureContract,
        InputContract,
        InspectionContract,
        LockViewContract,
        ElectionContract,
        SemaphoreContract {

  /** Helper for backends' own tests: the lease of a lock held by {@code client}, if any. */
  protected static @Nullable Lease tryOnce(LockClient client, String name) {
    return client.lock(name).tryAcquire().orElse(null);
  }
}
