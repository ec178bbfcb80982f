package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.LeaderElection;
import io.dlock.LeaderTerm;
import io.dlock.LeadershipListener;
import io.dlock.LockOptions;
import io.dlock.spi.ReleaseResult;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** Review of the election recipe (Candidacy): the order of notices under races. */
class CandidacyReviewTest {
  private static final LockOptions OPTIONS =
      LockOptions.defaults().withRenewedLease(Duration.ofSeconds(30));

  private static final class Told implements LeadershipListener {
    final List<String> events;
    final String who;

    Told(List<String> events, String who) {
      this.events = events;
      this.who = who;
    }

    @Override
    public void elected(LeaderTerm term) {
      events.add(who + "elected " + term.epoch());
    }

    @Override
    public void uncertain(LeaderTerm term) {
      events.add(who + "uncertain " + term.epoch());
    }

    @Override
    public void restored(LeaderTerm term) {
      events.add(who + "restored " + term.epoch());
    }

    @Override
    public void revoked(LeaderTerm term, Revocation reason, String detail) {
      events.add(who + "revoked " + term.epoch() + " " + reason);
    }
  }

  @Test
  void aResignationIsToldBeforeAnotherCandidateOfTheClientIsElected() throws Exception {
    FakeBackend backend = new FakeBackend(new FakeClock());
    AtomicBoolean firstReleased = new AtomicBoolean();
    CompletableFuture<ReleaseResult> releaseAnswer = new CompletableFuture<>();
    backend.onAcquire =
        call ->
            backend.acquires.size() == 1 || firstReleased.get()
                ? FakeBackend.granted(backend.nextToken())
                : FakeBackend.held(Duration.ofMillis(1));
    backend.onRelease =
        call -> {
          firstReleased.set(true); // the server let go: the other candidate is granted now
          return releaseAnswer; // and this client reads the answer later
        };
    CoreLockClient client = backend.client();
    List<String> told = new CopyOnWriteArrayList<>();
    try {
      LeaderElection a = client.election("leader", OPTIONS, new Told(told, "a "));
      LeaderElection b = client.election("leader", OPTIONS, new Told(told, "b "));
      a.join();
      await().until(() -> told.contains("a elected 1"));
      b.join();
      await().until(() -> backend.acquires.size() >= 2);

      CompletableFuture<Object> resigned =
          OnAnotherThread.call(
              () -> {
                a.resign();
                return "resigned";
              });
      await().until(() -> told.contains("b elected 2"));
      releaseAnswer.complete(ReleaseResult.RELEASED);
      assertThat(resigned.get()).isEqualTo("resigned");
      await().until(() -> told.size() == 3);
      assertThat(told).containsExactly("a elected 1", "a revoked 1 RESIGNED", "b elected 2");
      b.close();
    } finally {
      client.close();
    }
  }

  @Test
  void aTermGrantedWhileTheSessionIsSuspendedIsToldUncertainBeforeRestored() {
    FakeBackend backend = new FakeBackend(new FakeClock()).withSessions();
    CoreLockClient client = backend.client();
    List<String> told = new CopyOnWriteArrayList<>();
    try {
      backend.events().connectionSuspended("test");
      LeaderElection election = client.election("leader", OPTIONS, new Told(told, ""));
      election.join();
      await().until(() -> told.contains("uncertain 1"));
      assertThat(election.isLeader()).isFalse();
      backend.events().connectionRestored();
      await().until(() -> told.contains("restored 1"));
      assertThat(election.isLeader()).isTrue();
      assertThat(told).containsExactly("elected 1", "uncertain 1", "restored 1");
      election.close();
      await().until(() -> told.size() == 4);
      assertThat(told.get(3)).isEqualTo("revoked 1 RESIGNED");
    } finally {
      client.close();
    }
  }
}
