package io.dlock.core;

import io.dlock.Lease;
import io.dlock.LeaseLostEvent;
import io.dlock.LeaseState;
import io.dlock.Permit;
import java.time.Duration;
import java.util.function.Consumer;

/** A permit: the lease of its grant name, seen under its semaphore's name. */
final class HeldPermit implements Permit {
  private final Lease lease;
  private final String semaphore;
  private final int count;

  HeldPermit(Lease lease, String semaphore, int count) {
    this.lease = lease;
    this.semaphore = semaphore;
    this.count = count;
  }

  @Override
  public int count() {
    return count;
  }

  @Override
  public String lockName() {
    return semaphore;
  }

  @Override
  public long fencingToken() {
    return lease.fencingToken();
  }

  @Override
  public boolean isValid() {
    return lease.isValid();
  }

  @Override
  public LeaseState state() {
    return lease.state();
  }

  @Override
  public Duration remaining() {
    return lease.remaining();
  }

  @Override
  public void ensureValid() {
    lease.ensureValid();
  }

  @Override
  public void onLost(Consumer<LeaseLostEvent> listener) {
    lease.onLost(
        event ->
            listener.accept(
                new LeaseLostEvent(
                    semaphore, event.fencingToken(), event.reason(), event.detail())));
  }

  @Override
  public void extend(Duration newLease) {
    lease.extend(newLease);
  }

  @Override
  public boolean release() {
    return lease.release();
  }

  @Override
  public void abandon() {
    lease.abandon();
  }

  @Override
  public void close() {
    lease.close();
  }

  @Override
  public String toString() {
    return "Permit[" + semaphore + ", " + count + " permit(s), token " + fencingToken() + "]";
  }
}
