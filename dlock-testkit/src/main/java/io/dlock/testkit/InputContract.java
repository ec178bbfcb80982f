package io.dlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockNames;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Lock names and arguments: bad input is rejected naming the parameter, and every name the API
 * accepts, however awkward for a backend, is a lock of its own.
 *
 * <p>A topic of {@link LockContractTest}, which every backend runs as one suite; extend that class;
 * do not implement this interface on its own.
 */
public interface InputContract {

  /** The fixture of the suite: clients, lock names and the backend's hooks. */
  ContractFixture fixture();

  @Test
  default void badInputsAreRejectedNamingTheParameter() {
    LockClient client = fixture().newClient();
    assertThatThrownBy(() -> client.lock(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("name")
        .hasMessageContaining("1 to " + LockNames.MAX_LENGTH);
    assertThatThrownBy(() -> client.lock("x".repeat(LockNames.MAX_LENGTH + 1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("name");
    assertThatThrownBy(() -> client.lock("bad\nname"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("control");
    assertThatThrownBy(() -> client.lock(fixture().name("ok")).acquire(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("wait");
    assertThatThrownBy(() -> LockOptions.defaults().withRenewedLease(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("leaseTime")
        .hasMessageContaining(LockOptions.MIN_LEASE.toString());
    assertThatThrownBy(() -> LockOptions.defaults().withFixedLease(Duration.ofSeconds(-5)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("leaseTime");
    assertThatThrownBy(() -> LockOptions.defaults().withFixedLease(Duration.ofDays(8)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("leaseTime");
    assertThatThrownBy(() -> LockOptions.defaults().withOwnerId(""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("ownerId");
    assertThatThrownBy(() -> LockClientOptions.defaults().withOperationTimeout(Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("operationTimeout");
    assertThat(client.lock("x".repeat(LockNames.MAX_LENGTH)).tryAcquire()).isPresent();
  }

  /**
   * Every name the API accepts is a lock of its own on every backend: braces (Redis Cluster hash
   * tags: a name starting with "}" once made an empty tag and a CROSSSLOT error), slashes
   * (ZooKeeper paths), quotes and percent signs (SQL), wildcards (key patterns), spaces and
   * non-ASCII text.
   */
  @Test
  default void namesWithBracesSlashesQuotesAndWildcardsAreLocksOfTheirOwn() {
    LockClient client = fixture().newClient();
    LockClient other = fixture().newClient();
    // Each name starts with its awkward part: a unique prefix in front would hide it.
    List<String> awkward =
        List.of(
            "}" + fixture().name("closing-brace-first"),
            "{" + fixture().name("opening-brace-first"),
            "{}" + fixture().name("empty-tag-first"),
            "}{" + fixture().name("braces-reversed"),
            "/" + fixture().name("a/b/../c"),
            "'" + fixture().name("quote'and\"double"),
            "%" + fixture().name("percent%_under"),
            "*" + fixture().name("star*question?[set]"),
            " " + fixture().name("space and text"),
            "名" + fixture().name("非ASCII"));
    List<Lease> held = new ArrayList<>();
    for (String lockName : awkward) {
      Lease lease = client.lock(lockName).tryAcquire().orElseThrow();
      assertThat(other.lock(lockName).tryAcquire()).as("'%s' excludes others", lockName).isEmpty();
      held.add(lease);
    }
    assertThat(other.lock(fixture().name("closing-brace-first")).tryAcquire())
        .as("a name is not another with its first character removed")
        .hasValueSatisfying(Lease::release);
    for (Lease lease : held) {
      assertThat(lease.release()).isTrue();
    }
    for (String lockName : awkward) {
      assertThat(other.lock(lockName).tryAcquire()).hasValueSatisfying(Lease::release);
    }
  }
}
