package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.LeaderTerm;
import io.dlock.LeadershipListener.Revocation;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.spring.autoconfigure.DlockAutoConfiguration;
import io.dlock.spring.election.DlockLeaderElection;
import io.dlock.spring.election.LeadershipEvent;
import io.dlock.spring.election.LeadershipGranted;
import io.dlock.spring.election.LeadershipRestored;
import io.dlock.spring.election.LeadershipRevoked;
import io.dlock.spring.election.LeadershipUncertain;
import io.dlock.testkit.FaultyBackend;
import io.dlock.testkit.InMemoryLockBackend;
import io.dlock.testkit.TestTiming;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.event.EventListener;

/**
 * The starter's leader election ({@code dlock.election.name}): two application contexts on one
 * in-memory backend stand for two instances of a service.
 */
class LeaderElectionTest {
  private static final Duration WITHIN = TestTiming.millis(5_000);

  private final InMemoryLockBackend backend = new InMemoryLockBackend();

  private final ApplicationContextRunner withoutClient =
      new ApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(AopAutoConfiguration.class, DlockAutoConfiguration.class))
          .withUserConfiguration(Instance.class);

  /** An instance: its own client on the shared backend. */
  private final ApplicationContextRunner runner =
      withoutClient.withBean(
          LockClient.class,
          () -> LockClients.create(backend.sharedView(), LockClientOptions.defaults()));

  private final ApplicationContextRunner elected = withElection(runner);

  private static ApplicationContextRunner withElection(ApplicationContextRunner runner) {
    return runner.withPropertyValues("dlock.key-prefix=app:", "dlock.election.name=billing");
  }

  @Test
  void oneInstanceLeadsAndAnotherTakesOverWithAHigherEpochWhenItsContextCloses() {
    elected.run(
        a ->
            elected.run(
                b -> {
                  await().atMost(WITHIN).until(() -> granted(a).size() + granted(b).size() > 0);
                  AssertableApplicationContext leader = granted(a).isEmpty() ? b : a;
                  AssertableApplicationContext follower = leader == a ? b : a;
                  LeaderTerm first = granted(leader).get(0).term();
                  assertThat(first.election()).isEqualTo("app:billing");
                  assertThat(events(follower)).isEmpty();
                  assertThat(follower.getBean(DlockLeaderElection.class).isLeader()).isFalse();
                  assertThat(follower.getBean(DlockLeaderElection.class).leader())
                      .hasValueSatisfying(
                          info -> assertThat(info.fencingToken()).isEqualTo(first.epoch()));

                  // @LeaderOnly: run on the leader, with its term; skipped on the follower.
                  Jobs leading = leader.getBean(Jobs.class);
                  Jobs following = follower.getBean(Jobs.class);
                  assertThat(leading.report()).isTrue();
                  assertThat(leading.epoch()).contains(first.epoch());
                  assertThat(leading.async()).isCompletedWithValue("ran");
                  assertThat(following.report()).isFalse();
                  assertThat(following.epoch()).isEmpty();
                  assertThat(following.async()).isCompletedWithValue(null);
                  assertThat(leading.runs()).containsExactly(first.epoch());
                  assertThat(following.runs()).isEmpty();
                  // Outside @Locked: the follower's skip takes no lock (held here: it would throw).
                  try (LockClient other =
                      LockClients.create(backend.sharedView(), LockClientOptions.defaults())) {
                    Lease ledger = other.lock("app:ledger").tryAcquire().orElseThrow();
                    assertThat(following.ledger()).isFalse();
                    ledger.release();
                  }

                  // The shutdown resigns, and publishes the revocation before it returns.
                  List<LeadershipEvent> told = events(leader);
                  leader.close();
                  assertThat(told).hasSize(2);
                  assertThat(told.get(1))
                      .isInstanceOfSatisfying(
                          LeadershipRevoked.class,
                          revoked -> {
                            assertThat(revoked.term()).isSameAs(first);
                            assertThat(revoked.reason()).isEqualTo(Revocation.RESIGNED);
                          });

                  await().atMost(WITHIN).until(() -> !granted(follower).isEmpty());
                  LeaderTerm second = granted(follower).get(0).term();
                  assertThat(second.epoch()).isGreaterThan(first.epoch());
                  assertThat(following.report()).isTrue();
                  assertThat(following.runs()).containsExactly(second.epoch());
                }));
  }

  /**
   * A suspended session (ZooKeeper's, a database session's) makes the term uncertain: the event is
   * published and {@code @LeaderOnly} methods are skipped until the session is restored.
   */
  @Test
  void whileTheTermIsUncertainLeaderOnlyMethodsAreSkipped() {
    FaultyBackend session = new FaultyBackend(backend);
    withElection(
            withoutClient.withBean(
                LockClient.class, () -> LockClients.create(session, LockClientOptions.defaults())))
        .run(
            context -> {
              await().atMost(WITHIN).until(() -> !granted(context).isEmpty());
              Jobs jobs = context.getBean(Jobs.class);
              assertThat(jobs.report()).isTrue();

              session.events().connectionSuspended("test");
              await().atMost(WITHIN).until(() -> events(context).size() == 2);
              assertThat(events(context).get(1)).isInstanceOf(LeadershipUncertain.class);
              assertThat(jobs.report()).isFalse();

              session.events().connectionRestored();
              await().atMost(WITHIN).until(() -> events(context).size() == 3);
              assertThat(events(context).get(2)).isInstanceOf(LeadershipRestored.class);
              assertThat(jobs.report()).isTrue();
              assertThat(jobs.runs()).hasSize(2);
            });
  }

  @Test
  void leaderOnlyWithoutAnElectionFailsTheStartNamingTheProperty() {
    runner.run(
        context ->
            assertThat(context)
                .getFailure()
                .rootCause()
                .hasMessageContaining("@LeaderOnly on Jobs.")
                .hasMessageContaining("set dlock.election.name"));
  }

  @Test
  void aBadElectionLeaseFailsTheStartNamingTheProperty() {
    elected
        .withPropertyValues("dlock.election.lease-time=10ms")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .hasStackTraceContaining("dlock.election.lease-time: leaseTime must be from"));
  }

  private static List<LeadershipEvent> events(AssertableApplicationContext context) {
    return context.getBean(Recorder.class).events;
  }

  private static List<LeadershipGranted> granted(AssertableApplicationContext context) {
    return events(context).stream()
        .filter(LeadershipGranted.class::isInstance)
        .map(LeadershipGranted.class::cast)
        .toList();
  }

  @Configuration(proxyBeanMethods = false)
  static class Instance {
    @Bean
    Recorder recorder() {
      return new Recorder();
    }

    @Bean
    Jobs jobs() {
      return new Jobs();
    }
  }

  /** Every leadership event of its context, in the order published. */
  static class Recorder {
    final List<LeadershipEvent> events = new CopyOnWriteArrayList<>();

    @EventListener
    void on(LeadershipEvent event) {
      events.add(event);
    }
  }

  static class Jobs {
    private final List<Long> runs = new CopyOnWriteArrayList<>();

    /**
     * The epochs of the runs of {@link #report()} (through the proxy: its fields are not the
     * bean's).
     */
    public List<Long> runs() {
      return runs;
    }

    @LeaderOnly
    public boolean report() {
      runs.add(LeaderContext.currentEpoch());
      return true;
    }

    @LeaderOnly
    public Optional<Long> epoch() {
      return LeaderContext.currentTerm().map(LeaderTerm::epoch);
    }

    @LeaderOnly
    @Locked(name = "ledger", waitTime = "0")
    public boolean ledger() {
      return true;
    }

    @LeaderOnly
    public CompletableFuture<String> async() {
      return CompletableFuture.completedFuture("ran");
    }
  }
}
