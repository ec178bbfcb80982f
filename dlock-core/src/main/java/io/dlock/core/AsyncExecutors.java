package io.dlock.core;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Threads for asynchronous acquisitions: virtual threads where the JDK has them (21+), a cached
 * pool of daemon platform threads on 17. Waiting parks with {@code LockSupport}, which releases a
 * virtual thread's carrier.
 */
final class AsyncExecutors {
  private AsyncExecutors() {}

  static ExecutorService create(String name) {
    try {
      Object factory =
          MethodHandles.publicLookup()
              .findStatic(
                  Executors.class,
                  "newVirtualThreadPerTaskExecutor",
                  MethodType.methodType(ExecutorService.class))
              .invoke();
      return (ExecutorService) factory;
    } catch (Throwable notAvailable) {
      AtomicInteger ids = new AtomicInteger();
      return Executors.newCachedThreadPool(
          runnable -> {
            Thread thread = new Thread(runnable, name + "-" + ids.incrementAndGet());
            thread.setDaemon(true);
            return thread;
          });
    }
  }
}
