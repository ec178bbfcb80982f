package io.dlock.examples;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.redis.RedisLocks;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One OS process of buyers: several threads that each buy one item at a time until the stock runs
 * out, with or without the lock. Prints one line {@code RESULT sold=N minStock=M} at the end.
 *
 * <p>Arguments: Redis URI, {@code locked}, {@code unlocked} or {@code conditional} (lock-free
 * atomic conditional decrement), buyers, start time (epoch millis at which to start, so that all
 * processes start together).
 */
public final class BuyerProcess {
  static final String SKU = "sku-100";
  static final String LOCK_NAME = "flash-sale:" + SKU;
  static final Duration PAYMENT_TIME = Duration.ofMillis(2);

  private BuyerProcess() {}

  public static void main(String[] args) throws Exception {
    String uri = args[0];
    String mode = args[1];
    if (!List.of("locked", "unlocked", "conditional").contains(mode)) {
      throw new IllegalArgumentException(
          "mode must be locked, unlocked or conditional, but was " + mode);
    }
    boolean locked = mode.equals("locked");
    boolean conditional = mode.equals("conditional");
    int buyers = Integer.parseInt(args[2]);
    long startAt = Long.parseLong(args[3]);
    AtomicLong sold = new AtomicLong();
    AtomicLong minStock = new AtomicLong(Long.MAX_VALUE);
    AtomicLong first = new AtomicLong(Long.MAX_VALUE);
    AtomicLong last = new AtomicLong(Long.MIN_VALUE);
    try (LockClient locks = RedisLocks.newClient(uri)) {
      CountDownLatch done = new CountDownLatch(buyers);
      List<Thread> threads = new ArrayList<>();
      for (int b = 0; b < buyers; b++) {
        Thread buyer =
            new Thread(
                () -> {
                  try (Store store = new Store(uri, SKU)) {
                    waitUntil(startAt);
                    while (true) {
                      OptionalLong left;
                      if (locked) {
                        try (Lease lease = locks.lock(LOCK_NAME).acquire(Duration.ofSeconds(30))) {
                          left = store.buy(1, PAYMENT_TIME);
                        }
                      } else if (conditional) {
                        left = store.buyConditionally(1, PAYMENT_TIME);
                      } else {
                        left = store.buy(1, PAYMENT_TIME);
                      }
                      if (left.isEmpty()) {
                        break;
                      }
                      long now = System.currentTimeMillis();
                      first.accumulateAndGet(now, Math::min);
                      last.accumulateAndGet(now, Math::max);
                      sold.incrementAndGet();
                      minStock.accumulateAndGet(left.getAsLong(), Math::min);
                    }
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  } finally {
                    done.countDown();
                  }
                });
        threads.add(buyer);
        buyer.start();
      }
      done.await();
    }
    System.out.println(
        "RESULT sold="
            + sold.get()
            + " minStock="
            + (sold.get() == 0 ? 0 : minStock.get())
            + " first="
            + (sold.get() == 0 ? 0 : first.get())
            + " last="
            + (sold.get() == 0 ? 0 : last.get()));
  }

  private static void waitUntil(long epochMillis) throws InterruptedException {
    long wait = epochMillis - System.currentTimeMillis();
    if (wait > 0) {
      Thread.sleep(wait); // a common start line for all processes, not synchronization of state
    }
  }
}
