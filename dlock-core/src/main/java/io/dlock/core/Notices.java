package io.dlock.core;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Telling an application's listener on a client's event thread, in order, never throwing. */
final class Notices {
  private static final Logger log = LoggerFactory.getLogger(Notices.class);

  private Notices() {}

  /**
   * Runs {@code task} on {@code events} after the notices before it; on the calling thread once the
   * client is closed (its event thread stopped), rather than never. What the task throws is logged.
   */
  static void tell(ExecutorService events, Runnable task) {
    Runnable guarded =
        () -> {
          try {
            task.run();
          } catch (RuntimeException e) {
            log.error("A lock listener failed", e);
          }
        };
    try {
      events.execute(guarded);
    } catch (RejectedExecutionException e) {
      guarded.run();
    }
  }
}
