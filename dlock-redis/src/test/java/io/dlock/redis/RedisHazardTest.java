package io.dlock.redis;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import io.dlock.testkit.server.RedisServerProcess;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The failures the articles describe for older Redis lock designs, each shown impossible with
 * dlock's, against a real redis-server.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RedisHazardTest {
  private final List<LockClient> clients = new ArrayList<>();
  private RedisServerProcess server;
  private String prefix;

  @BeforeEach
  void setUp() {
    server = RedisTestServers.embedded();
    prefix = "hazard-" + UUID.randomUUID().toString().substring(0, 8) + "-";
  }

  @AfterEach
  void tearDown() {
    clients.forEach(LockClient::close);
  }

  private LockClient client() {
    LockClient client = RedisLocks.newClient(server.uri());
    clients.add(client);
    return client;
  }

  /** SETNX + EXPIRE, then DEL: a holder whose lease expired deletes the next holder's lock. */
  @Test
  void aLateReleaseAfterExpiryDoesNotDeleteTheNextHoldersLock() {
    LockClient a = client();
    LockClient b = client();
    LockClient c = client();
    String name = prefix + "late-release";
    Lease slow =
        a.lock(name, LockOptions.defaults().withFixedLease(Duration.ofMillis(200)))
            .tryAcquire()
            .orElseThrow();
    Lease next = b.lock(name).acquire(millis(5000)); // granted only once A's lease expired
    assertThat(slow.release()).as("A's late release is refused").isFalse();
    assertThat(c.lock(name).tryAcquire()).as("B still holds the lock").isEmpty();
    assertThat(next.isValid()).isTrue();
    assertThat(next.release()).as("B's own release still finds B's lock").isTrue();
  }

  /**
   * SETNX + GETSET: two clients that both see the expired lock both believe they took it. Here,
   * many waiters on two clients race for a lock at the instant it expires, over many rounds.
   */
  @Test
  void waitersThatSeeAnExpiredLockAtTheSameMomentNeverBothAcquire() throws Exception {
    List<LockClient> pair = List.of(client(), client());
    LockClient expiring = client();
    int rounds = 15;
    int waiters = 8;
    AtomicInteger inside = new AtomicInteger();
    AtomicInteger overlaps = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(waiters);
    try {
      for (int round = 0; round < rounds; round++) {
        String name = prefix + "race-" + round;
        Lease doomed =
            expiring
                .lock(name, LockOptions.defaults().withFixedLease(Duration.ofMillis(150)))
                .tryAcquire()
                .orElseThrow();
        CountDownLatch start = new CountDownLatch(1);
        List<Future<Long>> results = new ArrayList<>();
        for (int w = 0; w < waiters; w++) {
          LockClient client = pair.get(w % 2);
          results.add(
              pool.submit(
                  () -> {
                    start.await();
                    try (Lease lease = client.lock(name).acquire(millis(10_000))) {
                      if (inside.incrementAndGet() != 1) {
                        overlaps.incrementAndGet();
                      }
                      Thread.yield();
                      inside.decrementAndGet();
                      return lease.fencingToken();
                    }
                  }));
        }
        start.countDown();
        List<Long> tokens = new ArrayList<>();
        for (Future<Long> result : results) {
          tokens.add(result.get(30, TimeUnit.SECONDS));
        }
        assertThat(tokens).doesNotHaveDuplicates().allMatch(t -> t > doomed.fencingToken());
        doomed.release();
      }
    } finally {
      pool.shutdownNow();
    }
    assertThat(overlaps).hasValue(0);
  }

  /**
   * SETNX then EXPIRE as two commands: a crash between them leaves a lock that never expires. The
   * grant is one SET NX PX inside one script, so no lock key ever exists without a TTL, even while
   * many clients acquire and release concurrently.
   */
  @Test
  void noLockKeyEverExistsWithoutAnExpiry() throws Exception {
    LockClient client = client();
    AtomicBoolean running = new AtomicBoolean(true);
    List<String> names = List.of(prefix + "ttl-a", prefix + "ttl-b", prefix + "ttl-c");
    ExecutorService churn = Executors.newFixedThreadPool(4);
    List<Future<?>> workers = new ArrayList<>();
    for (int t = 0; t < 4; t++) {
      workers.add(
          churn.submit(
              () -> {
                while (running.get()) {
                  String name = names.get(ThreadLocalRandom.current().nextInt(names.size()));
                  client.lock(name).tryAcquire().ifPresent(Lease::release);
                }
                return null;
              }));
    }
    RedisClient raw = RedisClient.create(server.uri());
    int sampled = 0;
    List<String> withoutTtl = new CopyOnWriteArrayList<>();
    try (StatefulRedisConnection<String, String> connection = raw.connect()) {
      RedisCommands<String, String> redis = connection.sync();
      long until = System.nanoTime() + millis(1500).toNanos();
      while (System.nanoTime() < until) {
        KeyScanCursor<String> cursor =
            redis.scan(ScanArgs.Builder.matches("dlock:{" + prefix + "*"));
        while (true) {
          for (String key : cursor.getKeys()) {
            if (key.endsWith(":fence") || key.endsWith(":fences")) {
              continue; // fencing counters never expire, on purpose
            }
            sampled++;
            Long pttl = redis.pttl(key);
            if (pttl == -1L) {
              withoutTtl.add(key);
            }
          }
          if (cursor.isFinished()) {
            break;
          }
          cursor =
              redis.scan(
                  ScanCursor.of(cursor.getCursor()),
                  ScanArgs.Builder.matches("dlock:{" + prefix + "*"));
        }
      }
    } finally {
      running.set(false);
      for (Future<?> worker : workers) {
        worker.get(10, TimeUnit.SECONDS);
      }
      churn.shutdownNow();
      raw.shutdown();
    }
    assertThat(sampled).as("lock keys observed").isGreaterThan(0);
    assertThat(withoutTtl).isEmpty();
  }

  /** A holder process killed with SIGKILL leaves a lock that expires, and the next one gets it. */
  @Test
  void aHolderProcessKilledWithoutReleasingIsReplacedWithinItsLease() throws Exception {
    String name = prefix + "killed";
    Duration lease = Duration.ofMillis(1500);
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    Process holder =
        new ProcessBuilder(
                java,
                "-cp",
                System.getProperty("java.class.path"),
                CrashingHolder.class.getName(),
                server.uri(),
                name,
                Long.toString(lease.toMillis()))
            .redirectErrorStream(true)
            .start();
    try {
      BufferedReader out =
          new BufferedReader(
              new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8));
      String line;
      long token = -1;
      while ((line = out.readLine()) != null) {
        if (line.startsWith("HELD ")) {
          token = Long.parseLong(line.substring(5).trim());
          break;
        }
      }
      assertThat(token).as("the child took the lock").isPositive();
      String pttl = server.command("PTTL", "dlock:{" + name + "}");
      assertThat(Long.parseLong(pttl.substring(1).trim())).isBetween(1L, lease.toMillis());

      holder.destroyForcibly();
      long killed = System.nanoTime();
      holder.waitFor(10, TimeUnit.SECONDS);
      try (Lease next = client().lock(name).acquire(millis(10_000))) {
        assertThat(Duration.ofNanos(System.nanoTime() - killed))
            .isLessThan(lease.plus(millis(1000)));
        assertThat(next.fencingToken()).isGreaterThan(token);
      }
    } finally {
      holder.destroyForcibly();
    }
  }

  /**
   * GET, compare, then DEL as separate commands: the lock can expire and be taken between the
   * compare and the DEL, which then deletes the new holder's lock. The release is one script; here
   * the holder releases right around the instant its lease ends while another client waits.
   */
  @Test
  void aReleaseAtTheInstantOfExpiryCannotDeleteAnothersLock() throws Exception {
    LockClient a = client();
    LockClient b = client();
    LockClient c = client();
    int deletedOthers = 0;
    for (int round = 0; round < 25; round++) {
      String name = prefix + "instant-" + round;
      Lease first =
          a.lock(name, LockOptions.defaults().withFixedLease(Duration.ofMillis(100)))
              .tryAcquire()
              .orElseThrow();
      CompletableFuture<Lease> second = b.lock(name).acquireAsync(millis(10_000));
      // Release somewhere from just before to just after the 100 ms lease ends.
      TimeUnit.MICROSECONDS.sleep(ThreadLocalRandom.current().nextLong(90_000, 110_000));
      first.release();
      Lease held = second.get(10, TimeUnit.SECONDS);
      if (c.lock(name).tryAcquire().map(Lease::release).orElse(false)) {
        deletedOthers++;
      }
      if (!held.release()) {
        deletedOthers++;
      }
    }
    assertThat(deletedOthers).as("releases that removed another holder's lock").isZero();
  }
}
