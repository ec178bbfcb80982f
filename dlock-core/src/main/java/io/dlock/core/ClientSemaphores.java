package io.dlock.core;

import io.dlock.DistributedLock;
import io.dlock.LockOptions;
import io.dlock.spi.PermitStore;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

/**
 * A connected client's side of its semaphores: the unshared locks of permit grant names, the calls
 * of the backend's permit store, and the local wake-up a grant passes on. Kept apart from {@link
 * CoreLockClient}, whose locks it uses as they are.
 */
final class ClientSemaphores implements SemaphoreHost {
  private final CoreLockClient client;
  private final BackendAbilities abilities;

  ClientSemaphores(CoreLockClient client, BackendAbilities abilities) {
    this.client = client;
    this.abilities = abilities;
  }

  @Override
  public DistributedLock permitLock(String grantName, LockOptions lockOptions) {
    // Refused here too, not only in semaphore(): a deferred client's semaphore meets its backend
    // first here, and without a store the grant name went to the backend as a lock's (a mutex).
    abilities.permitStore();
    return NamedLock.unshared(client, grantName, lockOptions);
  }

  @Override
  public <T> T callStore(Function<PermitStore, CompletableFuture<T>> call, String what) {
    client.ensureOpen(); // a closed client's backend is closed: say so, not "unavailable"
    return BackendCalls.await(
        call.apply(abilities.permitStore()),
        client.operationTimeoutNanos(),
        what,
        abilities.backendName());
  }

  @Override
  public void permitGranted(String grantName) {
    client.signalLocalWaiters(grantName);
  }
}
