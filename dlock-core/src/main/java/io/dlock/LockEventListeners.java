package io.dlock;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Several listeners as the one a client takes (see {@link LockEventListener#allOf}): each is called
 * in turn, and one that throws does not keep the others from their event.
 */
final class LockEventListeners implements LockEventListener {
  private static final Logger log = LoggerFactory.getLogger(LockEventListeners.class);

  private final List<LockEventListener> listeners;

  private LockEventListeners(List<LockEventListener> listeners) {
    this.listeners = listeners;
  }

  /** {@link LockEventListener#NONE}, the only listener, or all of them in turn. */
  static LockEventListener of(List<? extends LockEventListener> listeners) {
    if (listeners.isEmpty()) {
      return LockEventListener.NONE;
    }
    if (listeners.size() == 1) {
      return listeners.get(0);
    }
    return new LockEventListeners(List.copyOf(listeners));
  }

  @Override
  public void waiting(String lockName) {
    each("waiting", lockName, l -> l.waiting(lockName));
  }

  @Override
  public void waitEnded(String lockName, Duration waited) {
    each("waitEnded", lockName, l -> l.waitEnded(lockName, waited));
  }

  @Override
  public void acquired(String lockName, long fencingToken, Duration latency, Duration waited) {
    each("acquired", lockName, l -> l.acquired(lockName, fencingToken, latency, waited));
  }

  @Override
  public void notAcquired(String lockName, AcquireFailure failure, Duration latency) {
    each("notAcquired", lockName, l -> l.notAcquired(lockName, failure, latency));
  }

  @Override
  public void released(String lockName, long fencingToken, Duration held) {
    each("released", lockName, l -> l.released(lockName, fencingToken, held));
  }

  @Override
  public void lost(LeaseLostEvent event) {
    each("lost", event.lockName(), l -> l.lost(event));
  }

  @Override
  public void renewalFailed(int leases, RuntimeException failure) {
    each("renewalFailed", "(" + leases + " leases)", l -> l.renewalFailed(leases, failure));
  }

  private void each(String method, String lockName, Consumer<LockEventListener> call) {
    for (LockEventListener listener : listeners) {
      try {
        call.accept(listener);
      } catch (RuntimeException | Error e) {
        if (e instanceof VirtualMachineError fatal) {
          throw fatal;
        }
        log.warn(
            "Lock event listener {} failed in {} for '{}'; ignored", listener, method, lockName, e);
      }
    }
  }
}
