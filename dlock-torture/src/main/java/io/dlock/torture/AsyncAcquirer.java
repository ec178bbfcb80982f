package io.dlock.torture;

import io.dlock.BackendUnavailableException;
import io.dlock.DistributedLock;
import io.dlock.Lease;
import io.dlock.LockTimeoutException;
import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The async-cancel workload of a worker: a share of its acquisitions go through {@code
 * acquireAsync}, and most of those futures are cancelled at a random moment, before, around or
 * after the grant. Every run of every lock target does it, so that every scenario covers it.
 *
 * <p>The history says what happened: {@code ACQUIRING} ({@code async a12}), {@code CANCEL} with
 * what {@code cancel} returned, and {@code ASYNC_END} when the future ended, however it ended. When
 * {@code cancel} returns false the grant came first: the worker holds it and releases it normally
 * (the caller records its {@code GRANT}). When it returns true the client must give back whatever
 * the server granted: {@link AsyncCancelCriterion} judges that nothing stays held.
 *
 * <p>The negative control ({@code leakOn} a lock) drops a lease whose future completed before the
 * cancel, without releasing it: the client keeps renewing a lease nobody holds.
 */
final class AsyncAcquirer {
  /** The share of a worker's acquisitions made asynchronously, in percent. */
  static final int PERCENT = 25;

  private final EventLog history;
  private final boolean leakLateGrants;
  private final String leakOn;
  private final int holdMaxMillis;
  private long count;
  private String lastId = "";

  /**
   * @param leakOn the lock whose late grants the negative control drops, or null: the real workload
   */
  AsyncAcquirer(EventLog history, String leakOn, int holdMaxMillis) {
    this.history = history;
    this.leakOn = leakOn;
    this.leakLateGrants = leakOn != null;
    this.holdMaxMillis = holdMaxMillis;
  }

  /**
   * Whether the next acquisition, of {@code lock}, goes through {@code acquireAsync}: a quarter of
   * them. The negative control makes every acquisition of one lock so, and none of the others,
   * which go on granting: a run that granted next to nothing would prove nothing.
   */
  boolean chooses(String lock) {
    if (leakOn != null) {
      return lock.equals(leakOn);
    }
    return ThreadLocalRandom.current().nextInt(100) < PERCENT;
  }

  /** The id of the last asynchronous acquisition ({@code a12}), for its grant's detail. */
  String lastId() {
    return lastId;
  }

  /**
   * Acquires {@code lock} asynchronously, cancelling the future at a random moment (or never).
   *
   * @return the lease the worker now holds, or null if it holds none (not granted, cancelled)
   * @throws InterruptedException when the run ends; the future is then cancelled (a grant that came
   *     first is returned, with the thread's interrupt set again)
   */
  Lease acquire(DistributedLock lock, Duration wait) throws InterruptedException {
    String name = lock.name();
    String id = "a" + ++count;
    lastId = id;
    history.append(Event.Kind.ACQUIRING, name, 0, "async " + id);
    // The negative control makes one attempt: once a dropped lease holds its lock, the worker
    // goes on with the other lock instead of waiting on this one.
    CompletableFuture<Lease> future = lock.acquireAsync(leakLateGrants ? Duration.ZERO : wait);
    future.whenComplete(
        (lease, failure) ->
            history.append(
                Event.Kind.ASYNC_END,
                name,
                lease == null ? 0 : lease.fencingToken(),
                id + " " + outcome(lease, failure)));
    long delay = cancelDelayMillis();
    try {
      if (leakLateGrants) {
        // The negative control cancels once the future ended, so that cancel returns false.
        future.handle((lease, failure) -> null).get();
        delay = 0;
      }
      if (delay >= 0) {
        Thread.sleep(delay); // the caller's own timer: the moment it gives up on the lock
        boolean cancelled = future.cancel(true);
        history.append(
            Event.Kind.CANCEL, name, 0, cancelled + " " + id + " after " + delay + " ms");
        if (cancelled) {
          return null; // nothing is ours: the client gives back what the server granted
        }
        if (leakLateGrants && !future.isCompletedExceptionally()) {
          return null; // the negative control: the grant that came first is dropped, not released
        }
      }
      return future.get(); // ends within the wait and one operation timeout: the criterion says
    } catch (ExecutionException e) {
      history.append(Event.Kind.NO_GRANT, name, 0, "async " + id + " " + reason(e.getCause()));
      if (e.getCause() instanceof BackendUnavailableException) {
        Thread.sleep(100); // the backend is down: retry a little later, not in a tight loop
      }
      return null;
    } catch (InterruptedException e) {
      // The run ends: stop waiting. A grant that won the race with the cancel is the worker's: it
      // records the hold and releases it as any other (with an owner id, the hold kept the grant
      // alive for its partner, and the checker must see it), then leaves with the interrupt.
      boolean cancelled = future.cancel(true);
      history.append(Event.Kind.CANCEL, name, 0, cancelled + " " + id + " at the run's end");
      if (!cancelled && !future.isCompletedExceptionally()) {
        Thread.currentThread().interrupt();
        return future.join();
      }
      throw e;
    }
  }

  /**
   * When to cancel, in ms after the call, or -1 for never: at once (before any answer), within a
   * round trip (around an uncontended grant), or within two of the longest holds (while a holder
   * works, or after the grant came).
   */
  private long cancelDelayMillis() {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    int choice = random.nextInt(10);
    if (choice < 2) {
      return -1;
    }
    if (choice < 4) {
      return 0;
    }
    if (choice < 6) {
      return random.nextInt(4);
    }
    return random.nextInt(2 * holdMaxMillis + 1);
  }

  private static String outcome(Lease lease, Throwable failure) {
    if (lease != null) {
      return "granted";
    }
    if (failure instanceof CancellationException) {
      return "cancelled";
    }
    return "failed " + reason(failure);
  }

  private static String reason(Throwable failure) {
    if (failure instanceof LockTimeoutException) {
      return "timeout";
    }
    if (failure instanceof BackendUnavailableException) {
      return "unavailable " + failure.getMessage();
    }
    return String.valueOf(failure);
  }
}
