package io.dlock.redis;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;

/**
 * A separate JVM that takes a lock, says so on stdout, and then waits to be killed with SIGKILL (it
 * never releases). Arguments: Redis URI, lock name, lease in milliseconds.
 */
public final class CrashingHolder {
  private CrashingHolder() {}

  public static void main(String[] args) throws InterruptedException {
    LockClient client = RedisLocks.newClient(args[0]);
    Lease lease =
        client
            .lock(
                args[1],
                LockOptions.defaults().withRenewedLease(Duration.ofMillis(Long.parseLong(args[2]))))
            .acquire(Duration.ofSeconds(10));
    System.out.println("HELD " + lease.fencingToken());
    System.out.flush();
    new CountDownLatch(1).await(); // until SIGKILL
  }
}
