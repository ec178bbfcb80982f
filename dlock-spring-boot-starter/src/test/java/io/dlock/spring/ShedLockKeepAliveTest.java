package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.dlock.LockClient;
import io.dlock.LockClients;
import io.dlock.LockInfo;
import io.dlock.spring.shedlock.DlockLockProvider;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import net.javacrumbs.shedlock.core.ClockProvider;
import net.javacrumbs.shedlock.core.LockConfiguration;
import net.javacrumbs.shedlock.core.SimpleLock;
import net.javacrumbs.shedlock.support.KeepAliveLockProvider;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/**
 * ShedLock's {@code KeepAliveLockProvider} takes the adapter (an {@code ExtensibleLockProvider}),
 * and its extensions reach the server. Its extension runs when the test says, not after half of
 * lockAtMostFor (at least 15 s).
 */
class ShedLockKeepAliveTest {

  @Test
  void keepAliveLockProviderExtendsTheLockOnTheServer() {
    String prefix = "shedlock-keepalive-" + UUID.randomUUID() + ":";
    String name = "job";
    ExtensionOnDemand scheduler = new ExtensionOnDemand();
    try (LockClient client = LockClients.connect(TestRedis.uri());
        DlockLockProvider provider =
            new DlockLockProvider(new LockAcquirer(client, new LockNamePatterns(prefix)))) {
      KeepAliveLockProvider keepAlive = new KeepAliveLockProvider(provider, scheduler);
      Duration atMost = Duration.ofSeconds(30);
      SimpleLock lock =
          keepAlive
              .lock(new LockConfiguration(ClockProvider.now(), name, atMost, Duration.ZERO))
              .orElseThrow();
      Duration first = remaining(client, prefix + name);
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> remaining(client, prefix + name).compareTo(first.minusMillis(300)) < 0);

      scheduler.runExtension();

      // lockAtMostFor again from now on the server: longer than what was left before.
      assertThat(remaining(client, prefix + name)).isGreaterThan(first.minusMillis(300));
      lock.unlock(); // unlocks the extended lock: the first one is done
      assertThat(client.inspect(prefix + name)).isEmpty();
    } finally {
      scheduler.shutdownNow();
    }
  }

  private static Duration remaining(LockClient client, String lockName) {
    List<LockInfo> held = client.inspect(lockName);
    assertThat(held).hasSize(1);
    Duration remaining = held.get(0).leaseRemaining();
    assertThat(remaining).isNotNull();
    return remaining;
  }

  /** Keeps the keep-alive task that KeepAliveLockProvider schedules, to run it when told. */
  private static final class ExtensionOnDemand extends ScheduledThreadPoolExecutor {
    private @Nullable Runnable extension;

    ExtensionOnDemand() {
      super(1);
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(
        Runnable command, long initialDelay, long period, TimeUnit unit) {
      extension = command;
      return super.schedule(() -> {}, 1, TimeUnit.DAYS); // cancellable, never runs the extension
    }

    void runExtension() {
      assertThat(extension).as("KeepAliveLockProvider scheduled its extension").isNotNull();
      extension.run();
    }
  }
}
