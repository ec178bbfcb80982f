package io.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dlock.BackendCapability;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Redlock offers no semaphores: a majority quorum cannot bound permits. With a bound of 2 on three
 * masters, grants to A on masters {1,2}, B on {1,3} and C on {2,3} each win a majority, and every
 * master sees 2 held, yet 3 are.
 *
 * <p>Its own class, not a test of {@code RedlockLockContractTest}: Surefire does not run the
 * top-level tests of that class beside its nested ones in a module build.
 */
class RedlockSemaphoresTest {

  @Test
  void aRedlockClientHasNoSemaphores() {
    // Three databases of one server: the capability needs masters that answer, not independent
    // ones.
    String server = RedisTestServers.embedded().uri();
    RedlockSettings settings =
        RedlockSettings.of(List.of(server + "/1", server + "/2", server + "/3"));
    try (LockClient client =
        LockClients.create(RedlockLockBackend.connect(settings), LockClientOptions.defaults())) {
      assertThat(client.capabilities()).doesNotContain(BackendCapability.SEMAPHORES);
      assertThatThrownBy(() -> client.semaphore("jobs", 2))
          .isInstanceOf(UnsupportedOperationException.class);
    }
  }
}
