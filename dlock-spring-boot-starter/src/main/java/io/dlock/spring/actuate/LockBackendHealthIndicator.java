package io.dlock.spring.actuate;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.Optional;
import org.springframework.boot.actuate.health.AbstractHealthIndicator;
import org.springframework.boot.actuate.health.Health;

/**
 * Health of the lock backend: UP when one attempt at a dedicated lock gets an answer (granted, then
 * released at once, or held by another instance's check); DOWN when the backend does not answer
 * within the client's operation timeout, with the error. Every backend supports this, and it checks
 * what the application needs: that locks can be taken.
 */
public class LockBackendHealthIndicator extends AbstractHealthIndicator {
  private static final LockOptions PROBE =
      LockOptions.defaults().withFixedLease(Duration.ofSeconds(5));

  private final LockClient client;
  private final String lockName;

  /**
   * @param lockName the lock the check takes and releases
   */
  public LockBackendHealthIndicator(LockClient client, String lockName) {
    super("dlock backend check failed");
    this.client = client;
    this.lockName = lockName;
  }

  @Override
  protected void doHealthCheck(Health.Builder builder) {
    Optional<Lease> lease = client.lock(lockName, PROBE).tryAcquire();
    lease.ifPresent(Lease::release);
    builder
        .up()
        .withDetail("backend", client.backendName())
        .withDetail("locksHeld", client.heldLeases().size());
  }
}
