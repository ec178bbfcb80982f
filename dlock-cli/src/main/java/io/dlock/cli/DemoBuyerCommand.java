package io.dlock.cli;

import io.dlock.Lease;
import io.dlock.LockClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** One buyer process of the demo (started by {@code dlock demo}; hidden). */
@Command(name = "demo-buyer", hidden = true)
final class DemoBuyerCommand implements Callable<Integer> {
  static final String LOCK_NAME = "demo:flash-sale";
  static final Duration PAYMENT_TIME = Duration.ofMillis(2);

  @Spec CommandSpec spec;

  @Mixin BackendOptions backend = new BackendOptions();

  @Option(names = "--stock-file", required = true)
  Path stockFile = Path.of("stock");

  @Option(names = "--buyers", defaultValue = "4")
  int buyers = 4;

  /** Whether purchases take the lock. */
  enum Mode {
    locked,
    unlocked
  }

  @Option(names = "--mode", required = true)
  Mode mode = Mode.locked;

  @Option(names = "--start-at", description = "epoch millis at which all buyer processes start")
  long startAt;

  @Override
  public Integer call() throws InterruptedException {
    StockFile stock = new StockFile(stockFile);
    AtomicLong sold = new AtomicLong();
    try (LockClient client = backend.connect()) {
      List<Thread> threads = new ArrayList<>();
      List<Throwable> failures = new java.util.concurrent.CopyOnWriteArrayList<>();
      for (int b = 0; b < buyers; b++) {
        Thread buyer =
            new Thread(
                () -> {
                  try {
                    long wait = startAt - System.currentTimeMillis();
                    if (wait > 0) {
                      Thread.sleep(wait); // a common start line for every process
                    }
                    while (true) {
                      boolean bought;
                      if (mode == Mode.locked) {
                        try (Lease lease = client.lock(LOCK_NAME).acquire(Duration.ofMinutes(1))) {
                          bought = stock.buyOne(PAYMENT_TIME);
                        }
                      } else {
                        bought = stock.buyOne(PAYMENT_TIME);
                      }
                      if (!bought) {
                        return;
                      }
                      sold.incrementAndGet();
                    }
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  } catch (RuntimeException e) {
                    failures.add(e);
                  }
                });
        threads.add(buyer);
        buyer.start();
      }
      for (Thread thread : threads) {
        thread.join();
      }
      if (!failures.isEmpty()) {
        throw new IllegalStateException("a buyer failed: " + failures.get(0), failures.get(0));
      }
    }
    spec.commandLine().getOut().println("RESULT sold=" + sold.get());
    spec.commandLine().getOut().flush();
    return ExitCodes.OK;
  }
}
