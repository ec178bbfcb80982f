package io.dlock.spring;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;
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

  /**
   * What a skipped call of a method returning {@code type} (of this kind) returns: a completed
   * future, an empty publisher, {@code Optional.empty()}, {@code false}, zero or null. Shared by
   * {@link OnLockFailure#SKIP} and {@link LeaderOnly}.
   */
  @Nullable Object skippedValue(Class<?> type) {
    if (this == COMPLETION_STAGE) {
      return CompletableFuture.completedFuture(null);
    }
    if (this == MONO || this == FLUX) {
      return ReactiveLockedCalls.empty(this);
    }
    if (type == Optional.class) {
      return Optional.empty();
    }
    if (!type.isPrimitive() || type == void.class) {
      return null;
    }
    if (type == boolean.class) {
      return false;
    }
    if (type == char.class) {
      return '\0';
    }
    if (type == long.class) {
      return 0L;
    }
    if (type == double.class) {
      return 0d;
    }
    if (type == float.class) {
      return 0f;
    }
    if (type == short.class) {
      return (short) 0;
    }
    if (type == byte.class) {
      return (byte) 0;
    }
    return 0;
  }
}
