package io.dlock.examples;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.redis.RedisLocks;
import io.dlock.testkit.server.RedisServerProcess;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.Arrays;
import java.util.Locale;

/**
 * Single-thread, uncontended acquire+release latency of dlock on Redis, next to the minimal safe
 * Redis lock done by hand with Lettuce (SET NX PX, then a compare-and-delete script): two round
 * trips, the physical limit. Rounds alternate between the two so that machine noise hits both.
 *
 * <p>Arguments: [redis URI] [cycles per round] [rounds]. Without a URI it starts its own server.
 */
public final class AcquireReleaseLatency {
  private static final String COMPARE_AND_DELETE =
      "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0";

  private AcquireReleaseLatency() {}

  public static void main(String[] args) throws Exception {
    RedisServerProcess embedded = null;
    String uri;
    if (args.length > 0 && !args[0].isBlank()) {
      uri = args[0];
    } else {
      embedded = RedisServerProcess.start();
      uri = embedded.uri();
    }
    int cycles = args.length > 1 ? Integer.parseInt(args[1]) : 20_000;
    int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 5;
    try (LockClient locks = RedisLocks.newClient(uri)) {
      RedisClient raw = RedisClient.create(uri);
      try (StatefulRedisConnection<String, String> connection = raw.connect()) {
        RedisCommands<String, String> redis = connection.sync();
        String sha = redis.scriptLoad(COMPARE_AND_DELETE);
        System.out.println("Redis at " + uri + ", " + cycles + " cycles x " + rounds + " rounds");
        // Warm-up: JIT, connections, script caches.
        measureDlock(locks, cycles / 2);
        measureRaw(redis, sha, cycles / 2);
        long[] dlock = new long[0];
        long[] limit = new long[0];
        for (int round = 0; round < rounds; round++) {
          dlock = concat(dlock, measureDlock(locks, cycles));
          limit = concat(limit, measureRaw(redis, sha, cycles));
        }
        print("dlock acquire+release", dlock);
        print("limit SET NX PX + CAD", limit);
        System.out.printf(
            Locale.ROOT,
            "dlock / limit, p50: %.2f  mean: %.2f%n",
            percentile(dlock, 0.50) / (double) percentile(limit, 0.50),
            mean(dlock) / mean(limit));
      } finally {
        raw.shutdown();
      }
    } finally {
      if (embedded != null) {
        embedded.close();
      }
    }
  }

  private static long[] measureDlock(LockClient locks, int cycles) {
    long[] nanos = new long[cycles];
    var lock = locks.lock("latency-probe");
    for (int i = 0; i < cycles; i++) {
      long start = System.nanoTime();
      Lease lease = lock.tryAcquire().orElseThrow();
      lease.release();
      nanos[i] = System.nanoTime() - start;
    }
    return nanos;
  }

  private static long[] measureRaw(RedisCommands<String, String> redis, String sha, int cycles) {
    long[] nanos = new long[cycles];
    String[] key = {"latency-probe-raw"};
    SetArgs nxPx = SetArgs.Builder.nx().px(30_000);
    for (int i = 0; i < cycles; i++) {
      String token = "t" + i;
      long start = System.nanoTime();
      if (!"OK".equals(redis.set(key[0], token, nxPx))) {
        throw new IllegalStateException("raw lock not acquired");
      }
      redis.<Long>evalsha(sha, ScriptOutputType.INTEGER, key, token);
      nanos[i] = System.nanoTime() - start;
    }
    return nanos;
  }

  private static void print(String label, long[] nanos) {
    System.out.printf(
        Locale.ROOT,
        "%-22s ops/s %8.0f   mean %6.1f us   p50 %6.1f us   p99 %7.1f us   p999 %7.1f us%n",
        label,
        1e9 / mean(nanos),
        mean(nanos) / 1e3,
        percentile(nanos, 0.50) / 1e3,
        percentile(nanos, 0.99) / 1e3,
        percentile(nanos, 0.999) / 1e3);
  }

  private static double mean(long[] nanos) {
    return Arrays.stream(nanos).average().orElse(0);
  }

  private static long percentile(long[] nanos, double p) {
    long[] sorted = nanos.clone();
    Arrays.sort(sorted);
    return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)];
  }

  private static long[] concat(long[] a, long[] b) {
    long[] c = Arrays.copyOf(a, a.length + b.length);
    System.arraycopy(b, 0, c, a.length, b.length);
    return c;
  }
}
