package io.dlock.spring;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * Builds the lock names of the starter ({@code dlock.key-prefix + pattern}, followed by {@code ":"
 * + key} for a keyed lock) and remembers their <em>name patterns</em>, so that a full lock name,
 * whose key makes the set of values unbounded ({@code stock:sku-42}), can be mapped back to its
 * bounded pattern ({@code stock}): the {@code lock} tag of the metrics.
 *
 * <p>A pattern is remembered when the starter builds a name from it (a {@link Locked} method's
 * {@code name}, a ShedLock job's name, the health check's lock), so the set of patterns is as
 * bounded as the code that uses them. {@link #patternOf} maps every other name to {@link #OTHER}.
 */
public final class LockNamePatterns {

  /** The pattern of a lock name the starter did not build. */
  public static final String OTHER = "other";

  private final String keyPrefix;

  /**
   * The most patterns remembered: a bounded number of tag values even when job names are made per
   * tenant; names of patterns beyond it are tagged {@link #OTHER}.
   */
  public static final int MAX_PATTERNS = 1_000;

  /** Full names of the locks without key, to their pattern. */
  private final Map<String, String> exact = new ConcurrentHashMap<>();

  /** {@code keyPrefix + pattern + ":"} of keyed locks, to their pattern. */
  private final Map<String, String> keyed = new ConcurrentHashMap<>();

  /**
   * @param keyPrefix prepended to every name built ({@code dlock.key-prefix}), may be empty
   */
  public LockNamePatterns(String keyPrefix) {
    this.keyPrefix = Objects.requireNonNull(keyPrefix, "keyPrefix");
  }

  /**
   * The lock name {@code keyPrefix + pattern}, or {@code keyPrefix + pattern + ":" + key} when a
   * key is given; remembers {@code pattern}.
   *
   * @param pattern a name of a bounded set: an annotation's name, a job's name; never a value
   *     computed from arguments
   * @param key the key, or null for a lock without one
   */
  public String lockName(String pattern, @Nullable String key) {
    Objects.requireNonNull(pattern, "pattern");
    if (key == null) {
      String name = keyPrefix + pattern;
      if (exact.size() + keyed.size() < MAX_PATTERNS) {
        exact.putIfAbsent(name, pattern);
      }
      return name;
    }
    String prefix = keyPrefix + pattern + ":";
    if (exact.size() + keyed.size() < MAX_PATTERNS) {
      keyed.putIfAbsent(prefix, pattern);
    }
    return prefix + key;
  }

  /**
   * The pattern {@code lockName} was built from, or {@link #OTHER} if the starter did not build it
   * from any (a lock taken directly through the client, the Spring Integration registry's locks). A
   * name that several patterns could have produced gets the most specific: a name without key
   * first, then the longest pattern.
   */
  public String patternOf(String lockName) {
    String pattern = exact.get(lockName);
    if (pattern != null) {
      return pattern;
    }
    if (!keyed.isEmpty()) {
      for (int colon = lockName.lastIndexOf(':');
          colon >= 0;
          colon = lockName.lastIndexOf(':', colon - 1)) {
        pattern = keyed.get(lockName.substring(0, colon + 1));
        if (pattern != null) {
          return pattern;
        }
      }
    }
    return OTHER;
  }
}
