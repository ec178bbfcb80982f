package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.HeldLeaseInfo;
import io.dlock.LeaderElection;
import io.dlock.LeaderTerm;
import io.dlock.LeadershipListener;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * The election recipe's notices beyond what the contract suite can cause on every backend: a
 * session suspended and restored (uncertain, restored), a session lost, and a client closed under a
 * leader. Each is told once, in order, and a new term follows only where the candidate competes.
 */
class CandidacyTest {
  private static final LockOptions OPTIONS =
      LockOptions.defaults().withRenewedLease(Duration.ofSeconds(30));

  /** What a candidate was told, in order. */
  private static final class Told implements LeadershipListener {
    final List<String> events = new CopyOnWriteArrayList<>();

    @Override
    public void elected(LeaderTerm term) {
      events.add("elected " + term.epoch());
    }

    @Override
    public void uncertain(LeaderTerm term) {
      events.add("uncertain " + term.epoch());
    }

    @Override
    public void restored(LeaderTerm term) {
      events.add("restored " + term.epoch());
    }

    @Override
    public void revoked(LeaderTerm term, Revocation reason, String detail) {
      events.add("revoked " + term.epoch() + " " + reason);
    }
  }

  @Test
  void aSuspendedSessionMakesTheTermUncertainAndALostOneEndsIt() {
    FakeBackend backend = new FakeBackend(new FakeClock()).withSessions();
    CoreLockClient client = backend.client();
    Told told = new Told();
    LeaderElection election = client.election("leader", OPTIONS, told);
    election.join();
    await().until(() -> told.events.contains("elected 1"));

    backend.events().connectionSuspended("test");
    await().until(() -> told.events.contains("uncertain 1"));
    assertThat(election.isLeader()).as("uncertain is not leading").isFalse();
    backend.events().connectionRestored();
    await().until(() -> told.events.contains("restored 1"));
    assertThat(election.isLeader()).isTrue();
    backend.events().sessionLost("test");

    await().until(() -> told.events.contains("elected 2"));
    assertThat(told.events)
        .containsExactly(
            "elected 1", "uncertain 1", "restored 1", "revoked 1 SESSION_LOST", "elected 2");
    assertThat(client.heldLeases())
        .as("the lost term's lease is given up, not left listed beside the new one")
        .extracting(HeldLeaseInfo::fencingToken)
        .containsExactly(2L);
    election.close();
    await().until(() -> told.events.contains("revoked 2 RESIGNED"));
    assertThat(backend.releases)
        .as("the lost term's clean-up (owner-checked, best effort), then the resignation")
        .extracting(call -> call.fencingToken())
        .containsExactly(1L, 2L);
    client.close();
  }

  @Test
  void aClientClosedUnderItsLeaderRevokesTheTermOnceAndCompetesNoMore() {
    FakeBackend backend = new FakeBackend(new FakeClock());
    CoreLockClient client = backend.client();
    Told told = new Told();
    client.election("leader", OPTIONS, told).join();
    await().until(() -> told.events.contains("elected 1"));

    client.close();

    assertThat(told.events).containsExactly("elected 1", "revoked 1 CLIENT_CLOSED");
    assertThat(backend.acquires).hasSize(1);
  }

  @Test
  void aCandidateThatResignsWhileItWaitsIsNeverElected() {
    FakeBackend backend = new FakeBackend(new FakeClock());
    backend.onAcquire = call -> FakeBackend.held(Duration.ofSeconds(30));
    CoreLockClient client = backend.client();
    Told told = new Told();
    LeaderElection election = client.election("leader", OPTIONS, told);
    election.join();
    await().until(() -> !backend.acquires.isEmpty());

    election.resign();
    backend.onAcquire = call -> FakeBackend.granted(backend.nextToken());

    assertThat(election.isLeader()).isFalse();
    assertThat(told.events).isEmpty();
    assertThat(backend.releases).as("nothing granted, nothing to give back").isEmpty();
    client.close();
  }
}
