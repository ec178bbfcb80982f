package io.dlock.bench;

import io.dlock.bench.SemaphoreContender.Participant;
import io.dlock.testkit.net.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The killed-holder rounds of one semaphore contender, as the election's failover ({@link
 * ElectionRounds}): each round makes a semaphore of one permit and two participants, each in a
 * client of its own behind a proxy of its own. The holder takes the permit; the waiter starts
 * waiting for it; at a random time within the first third of the bound after the grant (so that the
 * kill falls anywhere between two renewals or pings), the holder's proxy closes its connections and
 * refuses new ones, as a crashed process's sockets look to the server: no release, no session
 * close, no renewal. Measured from the kill until the waiter's acquisition returns with the permit.
 *
 * <p>The killed holder's client is closed in the background and not waited for (a client cut off
 * from its server may take seconds to close, time that measures nothing); the waiter's is closed in
 * the background while the next round runs.
 */
final class SemaphoreKillRounds {
  private final SemaphoreContender contender;
  private final RunPlan.Semaphores plan;
  private final Duration wait;

  SemaphoreKillRounds(SemaphoreContender contender, RunPlan.Semaphores plan) {
    this.contender = contender;
    this.plan = plan;
    // Generous: the permit is due back within the bound and a wake-up; a miss is an error.
    wait = plan.bound().multipliedBy(3).plusSeconds(10);
  }

  /**
   * Runs every round; the semaphore names start with {@code prefix}, so runs never meet.
   *
   * @return the time from each round's kill until the waiter held the permit, in milliseconds
   */
  List<Double> run(String prefix) throws Exception {
    List<Double> backMs = new ArrayList<>();
    List<CompletableFuture<Void>> closing = new ArrayList<>();
    ExecutorService background =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "semaphore-kill-" + contender.name());
              t.setDaemon(true);
              return t;
            });
    try {
      for (int round = 0; round < plan.killRounds(); round++) {
        backMs.add(round(prefix + "-" + round, closing, background));
      }
    } finally {
      try {
        CompletableFuture.allOf(closing.toArray(new CompletableFuture<?>[0]))
            .get(1, TimeUnit.MINUTES);
      } catch (TimeoutException e) {
        System.err.println(contender.name() + ": participants still closing after a minute: left");
      }
      background.shutdown();
    }
    return backMs;
  }

  private double round(
      String semaphore, List<CompletableFuture<Void>> closing, ExecutorService background)
      throws Exception {
    TcpProxy holderPath = new TcpProxy(contender.server());
    TcpProxy waiterPath = new TcpProxy(contender.server());
    Participant holder = null;
    Participant waiter = null;
    boolean killed = false;
    try {
      holder = contender.participant(semaphore, holderPath.address());
      waiter = contender.participant(semaphore, waiterPath.address());
      if (!holder.acquire(wait)) {
        throw new IllegalStateException(contender.name() + ": the holder got no permit");
      }
      long granted = System.nanoTime();
      Participant waiting = waiter;
      CompletableFuture<Long> waiterGranted =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  if (!waiting.acquire(wait)) {
                    throw new IllegalStateException(
                        contender.name() + ": no permit back within " + wait + " of the kill");
                  }
                  return System.nanoTime();
                } catch (Exception e) {
                  throw new IllegalStateException(contender.name() + ": the waiter failed", e);
                }
              },
              background);

      long phase = ThreadLocalRandom.current().nextLong(plan.bound().toNanos() / 3);
      long sleep = granted + phase - System.nanoTime();
      if (sleep > 0) {
        TimeUnit.NANOSECONDS.sleep(sleep);
      }
      if (waiterGranted.isDone()) {
        waiterGranted.join(); // a waiter that failed says why
        throw new IllegalStateException(
            contender.name() + ": the waiter got a permit while the only one was held");
      }
      long kill = System.nanoTime();
      holderPath.refuse();
      killed = true;
      long back = waiterGranted.get(wait.toMillis() + 1_000, TimeUnit.MILLISECONDS);
      return (back - kill) / 1e6;
    } finally {
      closeLater(holder, holderPath, killed, background);
      closing.add(closeLater(waiter, waiterPath, false, background));
    }
  }

  private CompletableFuture<Void> closeLater(
      Participant participant, TcpProxy path, boolean dead, ExecutorService background) {
    return CompletableFuture.runAsync(
        () -> {
          if (dead) {
            path.allow(); // so that its calls in flight end now, not at their timeouts
          }
          try {
            if (participant != null) {
              participant.close();
            }
          } catch (RuntimeException e) {
            System.err.println(contender.name() + ": closing a participant failed: " + e);
          }
          path.close();
        },
        background);
  }
}
