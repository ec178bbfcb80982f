package io.dlock.spring.autoconfigure;

import java.util.Collection;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/** Spelling helpers for the messages that refuse an unknown setting. */
final class Spelling {
  private Spelling() {}

  /**
   * The form in which Spring's relaxed binding compares names: lower case, without dashes and
   * underscores ({@code keyPrefix}, {@code key-prefix}, {@code key_prefix}, {@code KEY_PREFIX}).
   */
  static String uniform(String name) {
    return name.replace("-", "").replace("_", "").toLowerCase(Locale.ROOT);
  }

  /** The candidate nearest to {@code name} by edit distance of the uniform forms; null if none. */
  static @Nullable String closest(String name, Collection<String> candidates) {
    String wanted = uniform(name);
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String candidate : candidates) {
      int distance = distance(wanted, uniform(candidate));
      if (distance < bestDistance) {
        best = candidate;
        bestDistance = distance;
      }
    }
    return best;
  }

  /** Levenshtein distance. */
  static int distance(String a, String b) {
    int[] previous = new int[b.length() + 1];
    int[] current = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      previous[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      current[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        current[j] = Math.min(substitution, Math.min(previous[j] + 1, current[j - 1] + 1));
      }
      int[] swap = previous;
      previous = current;
      current = swap;
    }
    return previous[b.length()];
  }
}
