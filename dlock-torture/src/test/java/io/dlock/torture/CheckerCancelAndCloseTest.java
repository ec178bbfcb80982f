package io.dlock.torture;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.torture.Event.Kind;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The checker's criteria for the async-cancel workload ({@link AsyncCancelCriterion}) and the
 * client-close scenario ({@link ClientCloseCriterion}) against hand-written histories: each passes
 * a history that shows what dlock promises and fails one that breaks it. Lease 2 s, worker wait 6
 * s, operation timeout 5 s, next-grant bound 3666 ms. (CheckerTest holds the other criteria's.)
 */
class CheckerCancelAndCloseTest {
  private static final long MS = 1_000_000L;
  private final List<Event> history = new ArrayList<>();

  private void at(long ms, String source, Kind kind, String lock, long token, String detail) {
    history.add(new Event(ms * MS, source, kind, lock, token, detail));
  }

  /** A grant held and released, asked for at once. */
  private void hold(String source, String lock, long token, long fromMs, long toMs) {
    at(fromMs, source, Kind.GRANT, lock, token, "");
    at(toMs, source, Kind.RELEASING, lock, token, "");
    at(toMs + 1, source, Kind.RELEASED, lock, token, "true");
  }

  private boolean sharedOwnerIds;

  private RunResult check(Scenario scenario, int faults) {
    for (int i = 0;
        i < 5;
        i++) { // five clean grants of a lock nobody else uses: a run of substance
      hold("w9", "filler", 100 + i, 20_000 + i * 10L, 20_005 + i * 10L);
    }
    at(0, "faults", Kind.RUN_BEGIN, "-", 0, scenario.id());
    at(30_000, "faults", Kind.RUN_END, "-", 0, scenario.id());
    history.sort(Comparator.comparingLong(Event::nanos));
    RunSettings settings =
        new RunSettings(
            "test",
            scenario,
            Duration.ofSeconds(30),
            4,
            2,
            Duration.ofSeconds(2),
            Path.of("."),
            sharedOwnerIds);
    return new Checker(settings, Duration.ofMillis(3666), history).check("test", faults);
  }

  /**
   * From the first soak of shared owner ids with the async workload: w2's future is granted token
   * 650 of owner id team-2 at 100 ms; its cancel, 100 ms later, loses. Meanwhile w4's hold of that
   * grant is deleted by a forced release (150 ms) and w1 (team-1) is granted 651 and releases it
   * (160-195 ms). w2 takes its lease from the future at 200 ms: its hold began at 100 ms, when the
   * future completed, before 651 was granted, so 650 is in order. Taken as beginning at 200 ms, it
   * seemed to follow 651 with a lower token.
   */
  @Test
  void anAsyncHoldBeginsWhenItsFutureCompletesNotWhenItsWorkerTakesIt() {
    sharedOwnerIds = true;
    at(0, "w4", Kind.GRANT, "a", 650, "owner team-2 #1");
    at(50, "w2", Kind.ACQUIRING, "a", 0, "async a7");
    at(100, "w2", Kind.ASYNC_END, "a", 650, "a7 granted");
    at(150, "faults", Kind.FORCE_RELEASE, "a", 650, "w4");
    at(160, "w1", Kind.GRANT, "a", 651, "owner team-1 #1");
    at(195, "w1", Kind.RELEASING, "a", 651, "");
    at(196, "w1", Kind.RELEASED, "a", 651, "true");
    at(200, "w2", Kind.CANCEL, "a", 0, "false a7 after 100 ms");
    at(200, "w2", Kind.GRANT, "a", 650, "owner team-2 #2 async a7");
    at(230, "w4", Kind.RELEASING, "a", 650, "");
    at(231, "w4", Kind.LOST, "a", 650, "#1 TAKEN_OVER the release found the grant already gone");
    at(232, "w4", Kind.RELEASED, "a", 650, "false");
    at(260, "w2", Kind.RELEASING, "a", 650, "");
    at(261, "w2", Kind.LOST, "a", 650, "#2 TAKEN_OVER the release found the grant already gone");
    at(262, "w2", Kind.RELEASED, "a", 650, "false");
    assertThat(check(Scenario.FORCE_RELEASE, 1).failures())
        .noneMatch(f -> f.contains("fencing token"));
  }

  /** w1 asks for "a" asynchronously at 50 ms while w2 holds it, and cancels at 80 ms. */
  private void cancelledWhileW2Holds() {
    hold("w2", "a", 1, 0, 100);
    at(50, "w1", Kind.ACQUIRING, "a", 0, "async a1");
    at(80, "w1", Kind.ASYNC_END, "a", 0, "a1 cancelled");
    at(80, "w1", Kind.CANCEL, "a", 0, "true a1 after 30 ms");
    at(200, "w3", Kind.ACQUIRING, "a", 0, "");
  }

  @Test
  void aCancelledAcquisitionAfterWhichTheLockGoesToTheNextWaiter_passes() {
    cancelledWhileW2Holds();
    hold("w3", "a", 2, 230, 300);
    assertThat(check(Scenario.CALM, 0).failures()).isEmpty();
  }

  @Test
  void aLockHeldByNobodyAfterACancelWhileAWaiterWaits_fails() {
    cancelledWhileW2Holds();
    // w3 came after the lock was free: the stuck-lock criterion counts only waits from before.
    at(6_200, "w3", Kind.NO_GRANT, "a", 0, "timeout");
    hold("w3", "a", 2, 7_000, 7_050);
    List<String> failures = check(Scenario.CALM, 0).failures();
    assertThat(failures)
        .singleElement()
        .satisfies(
            f ->
                assertThat(f)
                    .startsWith(AsyncCancelCriterion.PREFIX)
                    .contains("a was free by every holder's account for 6000 ms while w3 waited")
                    .contains("after w1 cancelled an acquisition (true a1 after 30 ms"));
  }

  @Test
  void aFutureThatEndsWithinTheWaitAndTheOperationTimeout_passes_andOneThatNeverEnds_fails() {
    at(0, "w1", Kind.ACQUIRING, "b", 0, "async a1");
    at(10_900, "w1", Kind.ASYNC_END, "b", 0, "a1 failed timeout");
    at(10_900, "w1", Kind.NO_GRANT, "b", 0, "async a1 timeout");
    assertThat(check(Scenario.CALM, 0).failures()).isEmpty();

    history.clear();
    at(0, "w1", Kind.ACQUIRING, "b", 0, "async a1");
    assertThat(check(Scenario.CALM, 0).failures())
        .containsExactly(
            AsyncCancelCriterion.PREFIX
                + "the future of w1's async a1 for b (asked 0 ms into the run) never ended, over"
                + " the wait and the operation timeout (11000 ms)");
  }

  @Test
  void aFutureOfAKilledWorker_isNotJudged() {
    at(0, "w1", Kind.ACQUIRING, "b", 0, "async a1");
    at(10, "faults", Kind.KILL, "b", 0, "w1");
    hold("probe", "b", 1, 2_000, 2_001);
    assertThat(check(Scenario.KILL, 1).failures()).isEmpty();
  }

  @Test
  void aGrantTheClientStillListsAtItsEnd_fails() {
    cancelledWhileW2Holds();
    hold("w3", "a", 2, 230, 300);
    at(29_000, "w1", Kind.HELD_AT_END, "a", 3, "state VALID, held since 2026-12-02T14:52:11Z");
    assertThat(check(Scenario.CALM, 0).failures())
        .containsExactly(
            AsyncCancelCriterion.PREFIX
                + "w1's client still held a (token 3) at its end, by nobody's account (state"
                + " VALID, held since 2026-12-02T14:52:11Z)");
  }

  /**
   * w1 holds "a" (token 1) and its threads w1.b and w1.a wait for it; its client closes at 1000 ms;
   * the waiters are refused at once; the probe, waiting since the close, is granted at {@code
   * probeGrantedMs}.
   */
  private void clientClosedHoldingWithWaiters(long probeGrantedMs) {
    at(900, "w1", Kind.GRANT, "a", 1, "#1");
    at(910, "w1.b", Kind.ACQUIRING, "a", 0, "close waiter, blocking");
    at(910, "w1.a", Kind.ACQUIRING, "a", 0, "close waiter, async");
    at(1_000, "faults", Kind.CLIENT_CLOSE, "a", 0, "w1");
    at(1_000, "w1", Kind.RELEASING, "a", 1, "by closing the client");
    at(1_000, "w1", Kind.CLOSE_BEGIN, "a", 1, "holding, 2 waiters");
    at(1_001, "probe", Kind.ACQUIRING, "a", 0, "");
    at(1_002, "w1.a", Kind.NO_GRANT, "a", 0, "close waiter IllegalStateException: closed");
    at(1_003, "w1.b", Kind.NO_GRANT, "a", 0, "close waiter IllegalStateException: closed");
    at(1_050, "w1", Kind.CLOSE_END, "a", 1, "");
    at(1_050, "w1", Kind.RELEASED, "a", 1, "false");
    at(1_100, "w1", Kind.CLIENT_NEW, "-", 0, "");
    hold("probe", "a", 2, probeGrantedMs, probeGrantedMs + 1);
  }

  @Test
  void aClientClosedUnderItsHoldAndWaiters_passes_whenTheWaitersEndAndTheLockGoesOn() {
    clientClosedHoldingWithWaiters(1_020);
    // The closing client tells the holder its lease went with it: explained, not spurious.
    at(1_010, "w1", Kind.LOST, "a", 1, "#1 CLIENT_CLOSED the lock client was closed");
    hold("w1", "a", 3, 1_200, 1_300); // the new client: its grants are the worker's again
    RunResult result = check(Scenario.CLIENT_CLOSE, 1);
    assertThat(result.failures()).isEmpty();
    assertThat(result.losses()).isEqualTo(1);
  }

  @Test
  void aLockHeldByNobodyAfterTheClose_failsOnTheCloseCriterionAlone() {
    clientClosedHoldingWithWaiters(5_800);
    at(1_500, "w2", Kind.ACQUIRING, "a", 0, ""); // a waiter the stuck-lock criterion would count
    at(5_900, "w2", Kind.GRANT, "a", 3, "");
    at(5_950, "w2", Kind.RELEASING, "a", 3, "");
    at(5_951, "w2", Kind.RELEASED, "a", 3, "true");
    assertThat(check(Scenario.CLIENT_CLOSE, 1).failures())
        .containsExactly(
            ClientCloseCriterion.PREFIX
                + "a was held by nobody's account for 4799 ms while probe waited, after w1's"
                + " client (closed 1000 ms in) was closed holding it (next granted to another"
                + " client 4800 ms after), over the bound of 3666 ms");
  }

  /**
   * From the MariaDB election soak (2026-12-03): the closing worker's new client asks at once and
   * wins the lock against waiters that poll, and holds it past the bound. The closed client's hold
   * was freed (a new owner was granted), so the lock was never held by nobody's account.
   */
  @Test
  void aLockTakenAtOnceByTheClosedWorkersNewClient_passes_whileAnotherWaitsOn() {
    clientClosedHoldingWithWaiters(6_000);
    history.removeIf(e -> e.source().equals("probe") && e.token() == 2);
    hold("probe", "a", 3, 6_000, 6_001);
    hold("w1", "a", 2, 1_200, 5_900);
    assertThat(check(Scenario.CLIENT_CLOSE, 1).failures()).isEmpty();
  }

  /** The negative control of the one above: the new client's grant comes past the bound. */
  @Test
  void aLockTakenByTheClosedWorkersNewClientOnlyPastTheBound_fails() {
    clientClosedHoldingWithWaiters(6_000);
    history.removeIf(e -> e.source().equals("probe") && e.token() == 2);
    hold("probe", "a", 3, 6_000, 6_001);
    hold("w1", "a", 2, 4_900, 5_900);
    assertThat(check(Scenario.CLIENT_CLOSE, 1).failures())
        .anyMatch(
            f ->
                f.startsWith(ClientCloseCriterion.PREFIX + "a was held by nobody's account for")
                    && f.contains("(next granted to another client 3900 ms after)"));
  }

  @Test
  void aCloseAfterWhichNobodyElseWantsTheLock_passesWithoutAnotherGrant() {
    clientClosedHoldingWithWaiters(1_020);
    history.removeIf(e -> e.source().equals("probe"));
    assertThat(check(Scenario.CLIENT_CLOSE, 1).failures()).isEmpty();
  }

  @Test
  void aWaiterOfTheClosedClientThatWaitsOn_fails() {
    clientClosedHoldingWithWaiters(1_020);
    history.removeIf(e -> e.source().equals("w1.b") && e.kind() == Kind.NO_GRANT);
    at(6_910, "w1.b", Kind.NO_GRANT, "a", 0, "close waiter timeout");
    // (The stuck-lock criterion sees it too: the lock was free while w1.b waited on.)
    assertThat(check(Scenario.CLIENT_CLOSE, 1).failures())
        .anyMatch(
            f ->
                f.startsWith(ClientCloseCriterion.PREFIX + "w1.b, waiting for a")
                    && f.contains("ended 5910 ms after the close began"));
  }

  @Test
  void aGrantToTheClosedClient_fails() {
    clientClosedHoldingWithWaiters(1_020);
    history.removeIf(e -> e.source().equals("w1.a") && e.kind() == Kind.NO_GRANT);
    hold("w1.a", "a", 5, 1_040, 1_041);
    assertThat(check(Scenario.CLIENT_CLOSE, 1).failures())
        .anyMatch(
            f ->
                f.equals(
                    ClientCloseCriterion.PREFIX
                        + "w1.a was granted a (token 5) 40 ms after w1's client (closed 1000 ms"
                        + " in) began to close"));
  }

  /**
   * Owner ids: w1 holds team-1's grant of "a" (token 5) and releases it; w3, of team-1 too, asked
   * for "a" asynchronously meanwhile and cancelled after w1's release. w1 asks again and re-enters
   * token 5. With an ask in flight, the cancelled ask may have been counted in the grant on the
   * server until its undo, so the grant lived on; without any ask in flight, the grant had ended
   * and its token was given again.
   */
  private void ownerIdGrantReenteredAfterItsLastRelease(boolean askInFlight) {
    sharedOwnerIds = true;
    hold("w3", "b", 1, 1_000, 1_001); // w3's owner id, as the history tells it: its grant's detail
    history.removeIf(e -> e.source().equals("w3") && e.kind() == Kind.GRANT);
    at(1_000, "w3", Kind.GRANT, "b", 1, "owner team-1 #1");
    at(0, "w1", Kind.GRANT, "a", 5, "owner team-1 #1");
    at(100, "w1", Kind.RELEASING, "a", 5, "");
    at(101, "w1", Kind.RELEASED, "a", 5, "true");
    if (askInFlight) {
      at(50, "w3", Kind.ACQUIRING, "a", 0, "async a1");
      at(110, "w3", Kind.ASYNC_END, "a", 0, "a1 cancelled");
      at(110, "w3", Kind.CANCEL, "a", 0, "true a1 after 60 ms");
    }
    at(120, "w1", Kind.ACQUIRING, "a", 0, "");
    at(121, "w1", Kind.GRANT, "a", 5, "owner team-1 #2");
    at(200, "w1", Kind.RELEASING, "a", 5, "");
    at(201, "w1", Kind.RELEASED, "a", 5, "true");
  }

  @Test
  void anOwnerIdGrantKeptAliveByACancelledAskInFlight_mayBeReentered() {
    ownerIdGrantReenteredAfterItsLastRelease(true);
    assertThat(check(Scenario.CALM, 0).failures()).isEmpty();
  }

  @Test
  void anOwnerIdGrantReenteredAfterItEndedWithNoAskInFlight_fails() {
    ownerIdGrantReenteredAfterItsLastRelease(false);
    assertThat(check(Scenario.CALM, 0).failures())
        .containsExactly("1 fencing token(s) not strictly increasing");
  }
}
