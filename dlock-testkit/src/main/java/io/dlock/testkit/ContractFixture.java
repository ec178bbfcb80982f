package io.dlock.testkit;

import io.dlock.LockClient;
import io.dlock.LockClientOptions;
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
}
