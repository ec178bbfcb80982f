package io.dlock.testkit;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.LeaderElection;
import io.dlock.LeaderTerm;
import io.dlock.LeadershipListener;
import io.dlock.LockClient;
import io.dlock.LockInfo;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * Leader election on the backend ({@link LockClient#election}): one leader at a time, epochs that
 * strictly increase with every term, every revocation told once, a dead leader replaced within its
 * lease, and bad input refused. Part of {@link LockContractTest}.
 */
public interface ElectionContract {

  /** The fixture of the suite: clients, lock names and the backend's hooks. */
  ContractFixture fixture();

  /** What a candidate was told, in order, with the epoch each notice carried. */
  final class Told implements LeadershipListener {
    final List<String> told = new CopyOnWriteArrayList<>();
    final List<LeaderTerm> terms = new CopyOnWriteArrayList<>();
    private final FencedRegister register;

    Told(FencedRegister register) {
      this.register = register;
    }

    @Override
    public void elected(LeaderTerm term) {
      terms.add(term);
      told.add("elected " + term.epoch());
      register.write(term.epoch());
    }

    @Override
    public void uncertain(LeaderTerm term) {
      told.add("uncertain " + term.epoch());
    }

    @Override
    public void restored(LeaderTerm term) {
      told.add("restored " + term.epoch());
    }

    @Override
    public void revoked(LeaderTerm term, Revocation reason, String detail) {
      told.add("revoked " + term.epoch() + " " + reason);
    }

    long revocations(String reason) {
      return told.stream()
          .filter(t -> t.startsWith("revoked ") && t.endsWith(" " + reason))
          .count();
    }
  }

  /** A resource fenced by epoch: it accepts a write only with an epoch above every one before. */
  final class FencedRegister {
    private final AtomicLong highest = new AtomicLong();
    final List<Long> refused = new CopyOnWriteArrayList<>();

    void write(long epoch) {
      long before = highest.getAndAccumulate(epoch, Math::max);
      if (epoch <= before) {
        refused.add(epoch);
      }
    }
  }

  private LeaderElection candidate(LockClient client, String name, Told notices, Duration lease) {
    LeaderElection election =
        client.election(name, LockOptions.defaults().withRenewedLease(lease), notices);
    election.join();
    return election;
  }

  private static int leaders(List<LeaderElection> candidates) {
    return (int) candidates.stream().filter(LeaderElection::isLeader).count();
  }

  @Test
  default void oneCandidateLeadsAndEveryNewTermHasAHigherEpoch() {
    String name = fixture().name("election");
    FencedRegister register = new FencedRegister();
    List<LeaderElection> candidates = new ArrayList<>();
    List<Told> notices = new ArrayList<>();
    for (int i = 0; i < 2; i++) {
      Told told = new Told(register);
      notices.add(told);
      candidates.add(candidate(fixture().newClient(), name, told, millis(5_000)));
    }
    long lastEpoch = 0;
    for (int term = 0; term < 2; term++) {
      await().atMost(millis(10_000)).until(() -> leaders(candidates) == 1);
      LeaderElection leader =
          candidates.stream().filter(LeaderElection::isLeader).findFirst().orElseThrow();
      long epoch = leader.term().orElseThrow().epoch();
      assertThat(epoch).as("epochs strictly increase").isGreaterThan(lastEpoch);
      lastEpoch = epoch;
      LockInfo seen = leader.leader().orElseThrow();
      assertThat(seen.fencingToken()).as("who leads, as the backend says").isEqualTo(epoch);
      assertThat(candidates.get(1 - candidates.indexOf(leader)).leader())
          .as("the same from another candidate")
          .map(LockInfo::fencingToken)
          .contains(epoch);
      leader.resign();
      assertThat(leader.isLeader()).isFalse();
    }
    for (LeaderElection candidate : candidates) {
      candidate.close();
    }
    await().atMost(millis(5_000)).until(() -> leaders(candidates) == 0);
    assertThat(register.refused).as("no stale epoch ever written").isEmpty();
    long elected = notices.stream().mapToLong(n -> n.terms.size()).sum();
    await()
        .atMost(millis(5_000))
        .untilAsserted(
            () ->
                assertThat(notices.stream().mapToLong(n -> n.revocations("RESIGNED")).sum())
                    .as("every term revoked exactly once")
                    .isEqualTo(elected));
  }

  @Test
  default void aLeaderWhoseLockIsTakenIsToldOnceAndATermWithAHigherEpochFollows() {
    String name = fixture().name("election-taken");
    FencedRegister register = new FencedRegister();
    Told first = new Told(register);
    LeaderElection leader = candidate(fixture().newClient(), name, first, millis(600));
    await().atMost(millis(10_000)).until(leader::isLeader);
    long epoch = leader.term().orElseThrow().epoch();

    fixture().deleteLockOnServer(name); // an operator's break, or another's takeover

    // Taken over where the lock is a record; where it is bound to a connection or a session
    // (JDBC session and row modes), the break ends the connection: the session is lost.
    await()
        .atMost(millis(10_000))
        .until(() -> leader.term().map(t -> t.epoch() > epoch).orElse(false));
    assertThat(first.told.stream().filter(t -> t.startsWith("revoked " + epoch + " ")))
        .as("the term's end, told once")
        .singleElement()
        .isIn("revoked " + epoch + " TAKEN_OVER", "revoked " + epoch + " SESSION_LOST");
    assertThat(register.refused).isEmpty();
    leader.close();
  }

  @Test
  default void aDeadLeaderIsReplacedWithinItsLeaseWithAHigherEpoch() {
    Duration lease = millis(1_000);
    String name = fixture().name("election-dead");
    FencedRegister register = new FencedRegister();
    LeaderElection dying = candidate(fixture().newClient(), name, new Told(register), lease);
    FaultyBackend dyingLink = fixture().lastBackend();
    await().atMost(millis(10_000)).until(dying::isLeader);
    long epoch = dying.term().orElseThrow().epoch();
    Told nextTold = new Told(register);
    LeaderElection next = candidate(fixture().newClient(), name, nextTold, lease);

    long died = System.nanoTime();
    dyingLink.cut(); // no release, no renewal from now on: dead as far as the server can tell
    await().atMost(millis(10_000)).until(next::isLeader);
    Duration took = Duration.ofNanos(System.nanoTime() - died);

    assertThat(took)
        .as("elected within the lease and a second")
        .isLessThan(lease.plus(millis(1_000)));
    assertThat(next.term().orElseThrow().epoch()).isGreaterThan(epoch);
    assertThat(register.refused).isEmpty();
    next.close();
  }

  @Test
  default void badInputIsRefusedNamingWhatIsWrong() {
    LockClient client = fixture().newClient();
    Told notices = new Told(new FencedRegister());
    assertThatThrownBy(
            () ->
                client.election(
                    fixture().name("fixed"),
                    LockOptions.defaults().withFixedLease(millis(1_000)),
                    notices))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("options")
        .hasMessageContaining("renewed");
    assertThatThrownBy(
            () ->
                client.election(
                    fixture().name("owner"), LockOptions.defaults().withOwnerId("shared"), notices))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("owner id");
    assertThatThrownBy(() -> client.election("", notices))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> client.election(fixture().name("x"), null))
        .isInstanceOf(NullPointerException.class)
        .hasMessageContaining("listener");
  }
}
