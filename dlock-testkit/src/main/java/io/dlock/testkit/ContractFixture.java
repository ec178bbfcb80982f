package io.dlock.testkit;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockOptions;
import io.dlock.spi.LockBackend;
import java.util.Optional;

/**
 * What the topics of the contract suite see of its fixture ({@link LockContractFixture}): clients
 * of the server under test, unique lock names, the faulty wrapper of a client's backend, and the
 * backend's hooks. Every client made here, or handed to {@link #closeAfterTest}, is closed after
 * the test.
 */
public interface ContractFixture {

  /** A new client of the server under test, with a 2 s operation timeout. */
  LockClient newClient();

  /** A new client of the server under test. */
  LockClient newClient(LockClientOptions options);

  /** The faulty wrapper of the backend of the client created last. */
  FaultyBackend lastBackend();

  /** A unique lock name for this test run. */
  String name(String suffix);

  /** A new backend connected to the server under test: the backend's own hook. */
  LockBackend newBackend();

  /** A backend for an address where no server listens: the backend's own hook. */
  LockBackend newBackendForUnreachableServer();

  /** Deletes the lock from the server behind its holder's back: the backend's own hook. */
  void deleteLockOnServer(String name);

  /** Stops and restarts the server, when the test started it; empty for an external server. */
  Optional<ServerControl> serverControl();

  /** Closes {@code client} after the test, as the clients made by {@link #newClient} are. */
  void closeAfterTest(LockClient client);

  /**
   * A short lease on {@code lockName}, which nobody but {@code client} (or its owner id) holds. On
   * a loaded machine the grant can come back after a lease of a few hundred milliseconds has run
   * out, and the client rightly refuses it and gives it back; the tests that use a short lease are
   * about what happens once it ends, not about how fast it is granted, so such a late grant is
   * asked for again (at most five times), each time waiting up to 10 s for the one given back to be
   * gone.
   */
  default Lease grantShortLease(LockClient client, String lockName, LockOptions options) {
    BackendUnavailableException late = null;
    for (int attempt = 0; attempt < 5; attempt++) {
      try {
        // Waits a little: the grant refused as late may still be being given back on the server.
        return client.lock(lockName, options).acquire(TestTiming.millis(10_000));
      } catch (BackendUnavailableException e) {
        late = e;
      }
    }
    throw late;
  }
}
