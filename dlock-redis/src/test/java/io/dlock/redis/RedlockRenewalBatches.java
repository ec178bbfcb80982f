package io.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.spi.HeldLease;
import io.dlock.spi.LockOwner;
import io.dlock.testkit.server.RedisServerProcess;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * Redlock's renewal of many leases at once (issue 29): a large batch is not timed out as a whole by
 * the node timeout, and a silent master's timed-out calls are cancelled rather than left waiting on
 * its connection. Run by {@link RedlockLockContractTest} on its five masters.
 */
final class RedlockRenewalBatches {
  private static final Duration LEASE = Duration.ofSeconds(30);

  private RedlockRenewalBatches() {}

  /**
   * Writes {@code count} locks of one grant owner on every master in one script call each (what
   * {@code count} Redlock grants would leave, without their round trips), and returns them as
   * leases to renew.
   */
  static List<HeldLease> locksOnEveryMaster(List<RedisServerProcess> masters, int count) {
    LockOwner owner = LockOwner.ofGrant(UUID.randomUUID().toString().replace("-", ""));
    RedisKeys keys = new RedisKeys(RedisLockSettings.DEFAULT_KEY_PREFIX);
    String prefix = "batch-" + UUID.randomUUID() + "-";
    List<HeldLease> leases = new ArrayList<>();
    List<String> command =
        new ArrayList<>(
            List.of(
                "EVAL",
                "for i = 1, #KEYS do redis.call('SET', KEYS[i], ARGV[1], 'PX', ARGV[2]) end",
                Integer.toString(count)));
    for (int i = 0; i < count; i++) {
      leases.add(new HeldLease(prefix + i, owner, 1, LEASE));
      command.add(keys.lock(prefix + i));
    }
    command.add("1|0|1|r|0|test|" + owner.key());
    command.add(Long.toString(LEASE.toMillis()));
    for (RedisServerProcess master : masters) {
      assertThat(master.command(command.toArray(String[]::new))).doesNotStartWith("-");
    }
    return leases;
  }

  static RedlockLockBackend redlock(List<RedisServerProcess> masters, Duration nodeTimeout) {
    return RedlockLockBackend.connect(
        RedlockSettings.of(masters.stream().map(RedisServerProcess::uri).toList())
            .withNodeTimeout(nodeTimeout));
  }

  /**
   * 2000 leases renewed with a node timeout of 20 ms: one batch of them took longer than that on
   * every master, and every renewal failed as a whole. In calls of 50 leases, each master has 20 ms
   * per call.
   */
  static void manyLeasesAreRenewedWithAShortNodeTimeout(List<RedisServerProcess> masters)
      throws Exception {
    List<HeldLease> leases = locksOnEveryMaster(masters, 2000);
    try (RedlockLockBackend redlock = redlock(masters, Duration.ofMillis(20))) {
      // A warm-up round (class loading, the scripts' first load on each master) may be slow.
      redlock.renew(leases.subList(0, 1)).exceptionally(e -> Set.of()).get(5, TimeUnit.SECONDS);
      for (int round = 0; round < 2; round++) {
        assertThat(redlock.renew(leases).get(5, TimeUnit.SECONDS))
            .as("leases found gone in round %d", round)
            .isEmpty();
      }
    }
  }

  /**
   * A master that stops answering (SIGSTOP): each renewal is answered by the other four once the
   * silent one's bound passes, and its calls are cancelled then, not left waiting for an answer
   * until Lettuce's command timeout.
   */
  static void aSilentMastersTimedOutRenewalsAreCancelled(List<RedisServerProcess> masters)
      throws Exception {
    List<HeldLease> leases = locksOnEveryMaster(masters, 10);
    RedisServerProcess silent = masters.get(0);
    try (RedlockLockBackend redlock = redlock(masters, Duration.ofMillis(100))) {
      redlock.renew(leases).get(5, TimeUnit.SECONDS); // connected and scripts loaded everywhere
      RedisLockBackend silentNode = redlock.masters().get(0).connected();
      assertThat(silentNode).isNotNull();
      silent.pause();
      try {
        for (int round = 0; round < 3; round++) {
          assertThat(redlock.renew(leases).get(5, TimeUnit.SECONDS)).isEmpty();
          assertThat(silentNode.callsInFlight())
              .as("calls awaiting the silent master after round %d", round)
              .isZero();
        }
      } finally {
        silent.resume();
      }
    }
  }
}
