package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dlock.BackendCapability;
import io.dlock.LockInfo;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link io.dlock.LockClient#capabilities()} mirrors the backend's optional abilities. */
// A wait on a fake clock that nobody moves never ends: fail fast instead of at the 10-minute limit.
@Timeout(60)
class CapabilitiesTest {
  private final FakeClock clock = new FakeClock();

  private EnumSet<BackendCapability> capabilitiesOf(FakeBackend backend) {
    try (CoreLockClient client = backend.client()) {
      return client.capabilities().isEmpty()
          ? EnumSet.noneOf(BackendCapability.class)
          : EnumSet.copyOf(client.capabilities());
    }
  }

  @Test
  void aBackendWithOnlyThePrimitivesHasNoCapabilityButSharedOwnerIds() {
    assertThat(capabilitiesOf(new FakeBackend(clock)))
        .containsExactly(BackendCapability.OWNER_IDS_ACROSS_CLIENTS);
    assertThat(capabilitiesOf(new FakeBackend(clock).withoutSharedOwnerIds())).isEmpty();
  }

  @Test
  void eachAbilityShowsAsItsOwnCapability() {
    List<UnaryOperator<FakeBackend>> abilities =
        List.of(
            FakeBackend::withReleaseSignals,
            FakeBackend::withWaitQueue,
            FakeBackend::withSessions,
            b -> b.withAdministration(List.of()),
            FakeBackend::withPermits);
    List<BackendCapability> expected =
        List.of(
            BackendCapability.RELEASE_SIGNALS,
            BackendCapability.WAIT_QUEUE,
            BackendCapability.SESSION_BOUND_HOLDS,
            BackendCapability.ADMINISTRATION,
            BackendCapability.SEMAPHORES);
    for (int i = 0; i < abilities.size(); i++) {
      FakeBackend backend = abilities.get(i).apply(new FakeBackend(clock).withoutSharedOwnerIds());
      assertThat(capabilitiesOf(backend)).as("ability %d", i).containsExactly(expected.get(i));
    }
  }

  @Test
  void aBackendWithEveryAbilityHasEveryCapability_andTheSetCannotBeChanged() {
    FakeBackend backend =
        new FakeBackend(clock)
            .withReleaseSignals()
            .withWaitQueue()
            .withSessions()
            .withAdministration(List.of())
            .withPermits();
    try (CoreLockClient client = backend.client()) {
      assertThat(client.capabilities()).containsExactlyInAnyOrder(BackendCapability.values());
      assertThatThrownBy(() -> client.capabilities().remove(BackendCapability.ADMINISTRATION))
          .isInstanceOf(UnsupportedOperationException.class);
    }
  }

  @Test
  void inspectAndForceReleaseWithoutAdministrationThrowUnsupported_namingTheBackend() {
    try (CoreLockClient client = new FakeBackend(clock, "plainkv").client()) {
      assertThat(client.backendName()).isEqualTo("plainkv");
      assertThatThrownBy(() -> client.inspect("*"))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("plainkv backend")
          .hasMessageContaining("ADMINISTRATION");
      assertThatThrownBy(() -> client.forceRelease("stuck"))
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("plainkv backend");
    }
  }

  @Test
  void inspectWithAdministrationAsksTheBackend() {
    LockInfo held = new LockInfo("orders:42", "owner id job-7", 9, 1, null, Duration.ofSeconds(3));
    try (CoreLockClient client =
        new FakeBackend(clock, "adminkv").withAdministration(List.of(held)).client()) {
      assertThat(client.inspect("orders:*")).containsExactly(held);
      assertThat(client.forceRelease("orders:42")).isEmpty();
    }
  }
}
