package io.dlock.bench;

import io.dlock.bench.ElectionContender.Candidate;
import io.dlock.testkit.net.TcpProxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The rounds of one election contender. Each round starts {@value #CANDIDATES} candidates, each in
 * a client of its own behind a proxy of its own, and waits for a leader; then:
 *
 * <ol>
 *   <li><b>handover</b>: the leader steps down; measured from the call until another candidate is
 *       told it leads;
 *   <li><b>failover</b>: a random time within the first third of the bound after the new leader was
 *       told (so that the kill falls anywhere between two renewals or pings), its proxy closes its
 *       connections and refuses new ones, as the closed sockets of a crashed process look to the
 *       server: no release, no session close, no renewal. Measured from the kill until the last
 *       candidate is told it leads.
 * </ol>
 *
 * <p>A round's clients are closed in the background while the next round runs, and the killed
 * candidate's is not waited for at all: a client cut off from its server may take a second or more
 * to close (a ZooKeeper client's reconnection back-off, calls in flight that run into their
 * timeouts), time that measures nothing.
 */
final class ElectionRounds {
  static final int CANDIDATES = 3;

  /** The figures of every round, in milliseconds. */
  record Samples(List<Double> failoverMs, List<Double> handoverMs) {}

  private record Told(int candidate, long nanos) {}

  private final ElectionContender contender;
  private final RunPlan.Election plan;
  private final Duration noticeWait;

  ElectionRounds(ElectionContender contender, RunPlan.Election plan) {
    this.contender = contender;
    this.plan = plan;
    // Generous: a new leader is due within the bound and a wake-up; a miss is an error.
    noticeWait = plan.bound().multipliedBy(3).plusSeconds(10);
  }

  /** Runs every round; the election names start with {@code prefix}, so runs never meet. */
  Samples run(String prefix) throws Exception {
    Samples samples = new Samples(new ArrayList<>(), new ArrayList<>());
    List<CompletableFuture<Void>> closing = new ArrayList<>();
    ExecutorService closer =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "election-close");
              t.setDaemon(true);
              return t;
            });
    try {
      for (int round = 0; round < plan.rounds(); round++) {
        round(prefix + "-" + round, samples, closing, closer);
      }
    } finally {
      try {
        CompletableFuture.allOf(closing.toArray(new CompletableFuture<?>[0]))
            .get(1, TimeUnit.MINUTES);
      } catch (TimeoutException e) {
        System.err.println(contender.name() + ": candidates still closing after a minute: left");
      }
      closer.shutdown();
    }
    return samples;
  }

  private void round(
      String election,
      Samples samples,
      List<CompletableFuture<Void>> closing,
      ExecutorService closer)
      throws Exception {
    BlockingQueue<Told> told = new LinkedBlockingQueue<>();
    List<TcpProxy> paths = new ArrayList<>();
    List<Candidate> candidates = new ArrayList<>();
    int killed = -1;
    try {
      for (int i = 0; i < CANDIDATES; i++) {
        TcpProxy path = new TcpProxy(contender.server());
        paths.add(path);
        int index = i;
        candidates.add(
            contender.candidate(
                election, path.address(), () -> told.add(new Told(index, System.nanoTime()))));
      }
      for (Candidate c : candidates) {
        c.join();
      }
      Told first = next(told, Set.of(), "a first leader");

      long steppedDown = System.nanoTime();
      candidates.get(first.candidate()).stepDown();
      Told second = next(told, Set.of(first.candidate()), "a leader after the handover");
      samples.handoverMs().add((second.nanos() - steppedDown) / 1e6);

      long phase = ThreadLocalRandom.current().nextLong(plan.bound().toNanos() / 3);
      long sleep = second.nanos() + phase - System.nanoTime();
      if (sleep > 0) {
        TimeUnit.NANOSECONDS.sleep(sleep);
      }
      long kill = System.nanoTime();
      killed = second.candidate();
      paths.get(killed).refuse();
      Told third =
          next(told, Set.of(first.candidate(), second.candidate()), "a leader after the kill");
      samples.failoverMs().add((third.nanos() - kill) / 1e6);
    } finally {
      for (int i = 0; i < paths.size(); i++) {
        Candidate c = i < candidates.size() ? candidates.get(i) : null;
        TcpProxy path = paths.get(i);
        boolean dead = i == killed;
        CompletableFuture<Void> closed =
            CompletableFuture.runAsync(
                () -> {
                  if (dead) {
                    path.allow(); // so that its calls in flight end now, not at their timeouts
                  }
                  try {
                    if (c != null) {
                      c.close();
                    }
                  } catch (RuntimeException e) {
                    System.err.println(contender.name() + ": closing a candidate failed: " + e);
                  }
                  path.close();
                },
                closer);
        if (!dead) {
          closing.add(closed);
        }
      }
    }
  }

  /** The next candidate told it leads, other than {@code gone} (who cannot be told again). */
  private Told next(BlockingQueue<Told> told, Set<Integer> gone, String what)
      throws InterruptedException {
    long deadline = System.nanoTime() + noticeWait.toNanos();
    while (true) {
      Told t = told.poll(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
      if (t == null) {
        throw new IllegalStateException(
            contender.name() + ": no candidate told it leads within " + noticeWait + ": " + what);
      }
      if (!gone.contains(t.candidate())) {
        return t;
      }
    }
  }
}
