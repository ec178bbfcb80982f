package io.dlock.testkit;

import io.dlock.BackendUnavailableException;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.spi.LockBackend;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;

/**
 * The fixture of the contract suite: the hooks a backend implements (its backend, one for an
 * unreachable server, deleting a lock on the server, control of the server), clients of the server
 * under test each behind a {@link FaultyBackend}, a unique lock-name prefix per test, and closing
 * every client after each test. Backends do not extend this class but {@link LockContractTest}; the
 * topics of the suite reach the fixture through {@link #fixture()}.
 */
public abstract class LockContractFixture {

  private final List<LockClient> clients = new CopyOnWriteArrayList<>();
  private final List<FaultyBackend> backends = new CopyOnWriteArrayList<>();
  private final ContractFixture view = new View();
  private String prefix = "";

  /** A new backend connected to the server under test. */
  protected abstract LockBackend newBackend();

  /**
   * A backend for an address where no server listens. Either this throws {@link
   * BackendUnavailableException} or the backend's calls fail with it.
   */
  protected abstract LockBackend newBackendForUnreachableServer();

  /** Deletes the lock from the server behind its holder's back, as an operator or a bug might. */
  protected abstract void deleteLockOnServer(String name);

  /** Stops and restarts the server, when the test started it; empty for an external server. */
  protected Optional<ServerControl> serverControl() {
    return Optional.empty();
  }

  @BeforeEach
  void namePrefix(TestInfo info) {
    prefix =
        "contract-"
            + info.getTestMethod().map(m -> m.getName()).orElse("t")
            + "-"
            + UUID.randomUUID().toString().substring(0, 8)
            + "-";
  }

  @AfterEach
  void closeClients() {
    for (FaultyBackend backend : backends) {
      backend.restore();
    }
    for (LockClient client : clients) {
      try {
        client.close();
      } catch (RuntimeException e) {
        // The server may be stopped on purpose; closing must still end.
      }
    }
    clients.clear();
    backends.clear();
  }

  /** A unique lock name for this test run. */
  protected String name(String suffix) {
    return prefix + suffix;
  }

  protected LockClient newClient() {
    return newClient(LockClientOptions.defaults().withOperationTimeout(Duration.ofSeconds(2)));
  }

  protected LockClient newClient(LockClientOptions options) {
    FaultyBackend backend = new FaultyBackend(newBackend());
    backends.add(backend);
    LockClient client = LockClients.create(backend, options);
    clients.add(client);
    return client;
  }

  /** The faulty wrapper of the backend of the client created last. */
  protected FaultyBackend lastBackend() {
    return backends.get(backends.size() - 1);
  }

  /** This fixture as the topics of the suite see it: the methods above, and the hooks. */
  public final ContractFixture fixture() {
    return view;
  }

  /** Hands the topics the protected methods and hooks, as the subclass implements them. */
  private final class View implements ContractFixture {
    @Override
    public LockClient newClient() {
      return LockContractFixture.this.newClient();
    }

    @Override
    public LockClient newClient(LockClientOptions options) {
      return LockContractFixture.this.newClient(options);
    }

    @Override
    public FaultyBackend lastBackend() {
      return LockContractFixture.this.lastBackend();
    }

    @Override
    public String name(String suffix) {
      return LockContractFixture.this.name(suffix);
    }

    @Override
    public LockBackend newBackend() {
      return LockContractFixture.this.newBackend();
    }

    @Override
    public LockBackend newBackendForUnreachableServer() {
      return LockContractFixture.this.newBackendForUnreachableServer();
    }

    @Override
    public void deleteLockOnServer(String name) {
      LockContractFixture.this.deleteLockOnServer(name);
    }

    @Override
    public Optional<ServerControl> serverControl() {
      return LockContractFixture.this.serverControl();
    }

    @Override
    public void closeAfterTest(LockClient client) {
      clients.add(client);
    }
  }
}
