package io.dlock.idempotency;

import io.dlock.idempotency.jdbc.JdbcIdempotency;
import io.dlock.idempotency.redis.RedisIdempotency;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * A separate JVM that claims a dedup record and then hangs in its action until it is killed
 * (SIGKILL): the crash the in-progress timeout must recover from. Prints {@code STARTED} once the
 * action runs.
 *
 * <p>Arguments: {@code redis <uri> <key> <timeoutMillis>} or {@code jdbc <url> <tablePrefix> <key>
 * <timeoutMillis>}.
 */
public final class CrashingClaimant {
  private CrashingClaimant() {}

  public static void main(String[] args) throws Exception {
    DedupStore store;
    String key;
    long timeout;
    if (args[0].equals("redis")) {
      store = RedisIdempotency.connect(args[1]).dedupStore();
      key = args[2];
      timeout = Long.parseLong(args[3]);
    } else {
      store =
          JdbcIdempotency.on(TestDatabases.pool(args[1], 2), TestDatabases.settings(args[2]))
              .dedupStore();
      key = args[3];
      timeout = Long.parseLong(args[4]);
    }
    DedupRecords records = DedupRecords.on(store).withInProgressTimeout(Duration.ofMillis(timeout));
    records.runOnce(
        key,
        () -> {
          System.out.println("STARTED");
          System.out.flush();
          new CountDownLatch(1).await(); // hangs until the test kills this process
          return "never";
        });
  }
}
