package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.Lease;
import io.dlock.LockOptions;
import io.dlock.spi.AcquireResult;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Regression (issue 29, the review's suspicion, confirmed): an owner id's acquisition answered
 * late, with an older token than the grant another thread of the same owner id got meanwhile (the
 * older grant ended on the server in between), replaced the newer grant in the client: the newer
 * one was marked lost and the ended one handed out. The late answer is now refused.
 */
class OwnerIdLateAnswerTest {

  @Test
  void aLateAnswerWithAnOlderTokenNeverReplacesTheNewerGrantOfItsOwnerId() throws Exception {
    FakeBackend backend = new FakeBackend(new FakeClock());
    CompletableFuture<AcquireResult> late = new CompletableFuture<>();
    AtomicInteger calls = new AtomicInteger();
    backend.onAcquire = call -> calls.incrementAndGet() == 1 ? late : FakeBackend.granted(6);
    CoreLockClient client = backend.client();
    LockOptions owner = LockOptions.defaults().withOwnerId("job");
    try {
      CompletableFuture<Object> first =
          OnAnotherThread.call(() -> client.lock("x", owner).tryAcquire());
      org.awaitility.Awaitility.await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> calls.get() == 1);
      Lease newer = client.lock("x", owner).tryAcquire().orElseThrow();
      assertThat(newer.fencingToken()).isEqualTo(6);

      late.complete(new AcquireResult.Granted(5, 1)); // the older grant, answered only now
      // Given back, and asked once more: the owner id re-enters its newer grant.
      Object again = first.get(10, TimeUnit.SECONDS);
      assertThat(again).isInstanceOf(Optional.class);
      assertThat((Optional<?>) again)
          .get()
          .isInstanceOfSatisfying(Lease.class, l -> assertThat(l.fencingToken()).isEqualTo(6));
      assertThat(newer.isValid()).as("the newer grant is kept").isTrue();
      assertThat(backend.releases)
          .extracting(FakeBackend.ReleaseCall::fencingToken)
          .containsExactly(5L);
      assertThat(newer.release()).isTrue();
    } finally {
      client.close();
    }
  }

  @Test
  void aLateAnswerIsRefusedAfterTheNewerGrantOfItsOwnerIdWasReleasedAndLeftTheClient()
      throws Exception {
    FakeBackend backend = new FakeBackend(new FakeClock());
    CompletableFuture<AcquireResult> late = new CompletableFuture<>();
    AtomicInteger calls = new AtomicInteger();
    backend.onAcquire = call -> calls.incrementAndGet() == 1 ? late : FakeBackend.granted(6);
    CoreLockClient client = backend.client();
    LockOptions owner = LockOptions.defaults().withOwnerId("job");
    try {
      CompletableFuture<Object> first =
          OnAnotherThread.call(() -> client.lock("x", owner).tryAcquire());
      org.awaitility.Awaitility.await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> calls.get() == 1);
      Lease newer = client.lock("x", owner).tryAcquire().orElseThrow();
      assertThat(newer.release()).isTrue(); // the newer grant ends and leaves the client

      late.complete(new AcquireResult.Granted(5, 1)); // the older grant, answered only now
      // Asked once more (this fake grants 6 again): whatever comes back, never the ended grant.
      Object again = first.get(10, TimeUnit.SECONDS);
      assertThat(again).isInstanceOf(Optional.class);
      ((Optional<?>) again)
          .ifPresent(
              l ->
                  assertThat(((Lease) l).fencingToken())
                      .as("an ended grant is never handed out")
                      .isNotEqualTo(5));
      assertThat(backend.releases)
          .extracting(FakeBackend.ReleaseCall::fencingToken)
          .startsWith(6L, 5L);
    } finally {
      client.close();
    }
  }

  /**
   * One attempt (tryAcquire; the starter's first try before it waits) whose grant is answered after
   * a newer grant of the lock: given back, asked once more, and then held by the newer grant, so it
   * is not acquired. It threw BackendUnavailableException from a server that answered (seen under
   * contention on H2, failing a @Locked call that would have waited 30 s).
   */
  @Test
  void aSingleAttemptWhoseAnswerIsStaleFindsTheLockHeldInsteadOfFailing() throws Exception {
    FakeBackend backend = new FakeBackend(new FakeClock());
    CompletableFuture<AcquireResult> late = new CompletableFuture<>();
    AtomicInteger calls = new AtomicInteger();
    backend.onAcquire =
        call ->
            switch (calls.incrementAndGet()) {
              case 1 -> late;
              case 2 -> FakeBackend.granted(6);
              default -> FakeBackend.held(Duration.ofSeconds(1));
            };
    CoreLockClient client = backend.client();
    try {
      CompletableFuture<Object> first = OnAnotherThread.call(() -> client.lock("x").tryAcquire());
      org.awaitility.Awaitility.await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> calls.get() == 1);
      Lease newer = client.lock("x").tryAcquire().orElseThrow();

      late.complete(new AcquireResult.Granted(5, 1));
      assertThat(first.get(10, TimeUnit.SECONDS))
          .as("not acquired: held")
          .isEqualTo(Optional.empty());
      assertThat(calls).as("asked once more").hasValue(3);
      assertThat(newer.isValid()).isTrue();
      assertThat(newer.release()).isTrue();
    } finally {
      client.close();
    }
  }

  @Test
  void aWaitingAcquisitionWhoseAnswerIsStaleAsksAgainInsteadOfFailing() throws Exception {
    FakeBackend backend = new FakeBackend(new FakeClock());
    CompletableFuture<AcquireResult> late = new CompletableFuture<>();
    AtomicInteger calls = new AtomicInteger();
    backend.onAcquire =
        call ->
            switch (calls.incrementAndGet()) {
              case 1 -> late;
              case 2 -> FakeBackend.granted(6);
              default -> FakeBackend.granted(7);
            };
    CoreLockClient client = backend.client();
    try {
      CompletableFuture<Object> first =
          OnAnotherThread.call(() -> client.lock("x").acquire(Duration.ofSeconds(30)));
      org.awaitility.Awaitility.await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> calls.get() == 1);
      Lease newer = client.lock("x").tryAcquire().orElseThrow();
      assertThat(newer.release()).isTrue();

      late.complete(new AcquireResult.Granted(5, 1));
      Object outcome = first.get(10, TimeUnit.SECONDS);
      assertThat(outcome).isInstanceOf(Lease.class);
      Lease lease = (Lease) outcome;
      assertThat(lease.fencingToken()).as("granted anew, not the stale answer").isEqualTo(7);
      assertThat(lease.release()).isTrue();
    } finally {
      client.close();
    }
  }
}
