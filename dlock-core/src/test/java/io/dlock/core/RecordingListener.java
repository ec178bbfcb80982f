package io.dlock.core;

import static org.awaitility.Awaitility.await;

import io.dlock.LeaseLostEvent;
import io.dlock.LockEventListener;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

/** A {@link LockEventListener} that writes down every event it is told, in order. */
class RecordingListener implements LockEventListener {

  record Acquired(String lockName, long fencingToken, Duration latency, Duration waited) {}

  record NotAcquired(String lockName, AcquireFailure failure, Duration latency) {}

  record Released(String lockName, long fencingToken, Duration held) {}

  record RenewalFailed(int leases, RuntimeException failure) {}

  record WaitEnded(String lockName, Duration waited) {}

  final List<String> waiting = new CopyOnWriteArrayList<>();
  final List<WaitEnded> waitEnded = new CopyOnWriteArrayList<>();

  /** The names of the acquisition events (waiting, waitEnded, acquired, notAcquired) in order. */
  final List<String> acquisitionEvents = new CopyOnWriteArrayList<>();

  final List<Acquired> acquired = new CopyOnWriteArrayList<>();
  final List<NotAcquired> notAcquired = new CopyOnWriteArrayList<>();
  final List<Released> released = new CopyOnWriteArrayList<>();
  final List<LeaseLostEvent> lost = new CopyOnWriteArrayList<>();
  final List<RenewalFailed> renewalFailed = new CopyOnWriteArrayList<>();

  @Override
  public void waiting(String lockName) {
    waiting.add(lockName);
    acquisitionEvents.add("waiting");
  }

  @Override
  public void waitEnded(String lockName, Duration waited) {
    waitEnded.add(new WaitEnded(lockName, waited));
    acquisitionEvents.add("waitEnded");
  }

  @Override
  public void acquired(String lockName, long fencingToken, Duration latency, Duration waited) {
    acquired.add(new Acquired(lockName, fencingToken, latency, waited));
    acquisitionEvents.add("acquired");
  }

  @Override
  public void notAcquired(String lockName, AcquireFailure failure, Duration latency) {
    notAcquired.add(new NotAcquired(lockName, failure, latency));
    acquisitionEvents.add("notAcquired");
  }

  @Override
  public void released(String lockName, long fencingToken, Duration held) {
    released.add(new Released(lockName, fencingToken, held));
  }

  @Override
  public void lost(LeaseLostEvent event) {
    lost.add(event);
  }

  @Override
  public void renewalFailed(int leases, RuntimeException failure) {
    renewalFailed.add(new RenewalFailed(leases, failure));
  }

  /**
   * Waits until every lost-lease notice the client queued so far has been delivered: the client's
   * event thread runs its tasks in order, so once a marker queued now has run, so has every notice
   * queued before it.
   */
  static void drainEventThread(CoreLockClient client) {
    AtomicBoolean ran = new AtomicBoolean();
    client.dispatch(
        event -> ran.set(true),
        new LeaseLostEvent("marker", 0, LeaseLostEvent.Reason.EXPIRED, "drain"));
    await("the client's event thread").atMost(Duration.ofSeconds(10)).untilTrue(ran);
  }
}
