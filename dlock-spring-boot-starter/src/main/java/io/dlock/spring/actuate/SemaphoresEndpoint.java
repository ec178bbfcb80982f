package io.dlock.spring.actuate;

import io.dlock.LeasedSemaphore;
import io.dlock.LockClient;
import io.dlock.PermitInfo;
import java.util.List;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The {@code semaphores} endpoint ({@code /actuator/semaphores/NAME}): the permits of the semaphore
 * NAME held now, by any instance, as the backend says: holder, count, fencing token, lease left.
 * Read-only, like {@link LocksEndpoint}; permits this instance holds are in {@code /actuator/locks}
 * too, under the semaphore's name. Breaking a stuck permit is an administrator's act: {@link
 * LeasedSemaphore#forceRelease(long)} or {@code dlock release --force --permit TOKEN NAME}.
 */
@Endpoint(id = "semaphores")
public class SemaphoresEndpoint {
  private final LockClient client;

  /** An endpoint over {@code client}. */
  public SemaphoresEndpoint(LockClient client) {
    this.client = client;
  }

  /** The permits of the semaphore {@code name} held now. */
  @ReadOperation
  public HeldPermits permits(@Selector String name) {
    // The bound plays no part in inspection: any handle of the name lists its permits.
    List<PermitInfo> held = client.semaphore(name, LeasedSemaphore.MAX_PERMITS).holders();
    return new HeldPermits(name, held.stream().map(HeldPermit::of).toList());
  }

  /**
   * The permits of one semaphore held now.
   *
   * @param semaphore the semaphore's name
   * @param permits one entry per grant, by fencing token
   */
  public record HeldPermits(String semaphore, List<HeldPermit> permits) {}

  /**
   * One grant of a semaphore's permits.
   *
   * @param holder who holds it ({@code host/pid/thread})
   * @param count how many permits it holds
   * @param fencingToken the grant's fencing token
   * @param heldSince ISO-8601 instant of the grant by the holder's clock, or null if unknown
   * @param leaseRemainingMillis the lease left by the server, or null if it is a session's
   */
  public record HeldPermit(
      String holder, int count, long fencingToken, String heldSince, Long leaseRemainingMillis) {

    static HeldPermit of(PermitInfo info) {
      return new HeldPermit(
          info.holder(),
          info.count(),
          info.fencingToken(),
          info.heldSince() == null ? null : info.heldSince().toString(),
          info.leaseRemaining() == null ? null : info.leaseRemaining().toMillis());
    }
  }
}
