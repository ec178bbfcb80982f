package io.dlock.spring;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.springframework.util.ClassUtils;

/**
 * What a {@link Locked} method returns, which decides how long its lock is held: until the method
 * returns, until the future it returns completes, or, for a Reactor publisher, from each
 * subscription until that subscription ends.
 */
enum LockedResult {
  /** Anything else: the lock is held while the method runs. */
  VALUE,
  /**
   * {@link CompletableFuture} or {@link CompletionStage}: held from the call until the returned
   * stage completes.
   */
  COMPLETION_STAGE,
  /** Reactor's {@code Mono}: held from each subscription until it ends. */
  MONO,
  /** Reactor's {@code Flux}: held from each subscription until it ends. */
  FLUX;

  private static final boolean REACTOR =
      ClassUtils.isPresent("reactor.core.publisher.Mono", LockedResult.class.getClassLoader());

  /** The kind of a method returning {@code type}. */
  static LockedResult of(Class<?> type) {
    if (type == CompletableFuture.class || type == CompletionStage.class) {
      return COMPLETION_STAGE;
    }
    if (REACTOR) {
      if (type == reactor.core.publisher.Mono.class) {
        return MONO;
      }
      if (type == reactor.core.publisher.Flux.class) {
        return FLUX;
      }
    }
    return VALUE;
  }

  /** Whether the lock outlives the method's return. */
  boolean isAsync() {
    return this != VALUE;
  }
}
