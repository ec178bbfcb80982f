package io.dlock.core;

import io.dlock.DistributedLock;
import io.dlock.LockOptions;
import io.dlock.spi.PermitStore;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * What a {@link NamedSemaphore} needs of its client; both clients (connected, deferred) are one.
 */
interface SemaphoreHost {

  /** The unshared lock of a permit grant name ({@link NamedLock#unshared}). */
  DistributedLock permitLock(String grantName, LockOptions options);

  /**
   * Calls the backend's permit store and waits for the answer within the operation timeout.
   *
   * @param what the call, for the exception if the backend does not answer
   * @throws UnsupportedOperationException if the backend has no semaphores
   */
  <T> T callStore(Function<PermitStore, CompletableFuture<T>> call, String what);

  /**
   * A permit of {@code grantName} was granted: the next local waiter of that name may try too, as
   * more permits may be free (a lock's grant needs no such pass, as nothing else is free).
   */
  void permitGranted(String grantName);
}
