package io.dlock.spi;

import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * The properties a backend reads from {@link LockBackendProvider#connect}'s map, for one kind of
 * URI: what {@link io.dlock.LockClients#connect}, the command line's {@code --config} and the
 * Spring starter's {@code dlock.backend-properties} check a setting against, so that a misspelt
 * {@code keyprefx} is refused, naming {@code keyPrefix}, rather than silently doing nothing.
 *
 * @param backend the backend's name in messages ({@code Redis}, {@code Redlock})
 * @param names the keys it reads, in its own spelling ({@code keyPrefix})
 * @param note said after the list of keys where it helps, or empty ({@code " (Redlock takes its
 *     credentials in the URI)"})
 */
public record AcceptedProperties(String backend, List<String> names, String note) {
  public AcceptedProperties {
    Objects.requireNonNull(backend, "backend");
    names = List.copyOf(names);
    Objects.requireNonNull(note, "note");
  }

  public AcceptedProperties(String backend, List<String> names) {
    this(backend, names, "");
  }

  /**
   * The key {@code given} means in this backend's spelling, compared as Spring's relaxed binding
   * compares names ({@code key-prefix}, {@code key_prefix}, {@code KEY_PREFIX} mean {@code
   * keyPrefix}); null if none.
   */
  public @Nullable String spelledAs(String given) {
    String wanted = uniform(given);
    for (String name : names) {
      if (uniform(name).equals(wanted)) {
        return name;
      }
    }
    return null;
  }

  /**
   * Refuses a key of {@code properties} this backend does not read, exactly as spelled.
   *
   * @throws IllegalArgumentException naming the key, the closest one it reads, and all of them
   */
  public void check(Collection<String> properties) {
    for (String key : properties) {
      if (!names.contains(key)) {
        throw new IllegalArgumentException(refusal("property '" + key + "'", key, n -> n));
      }
    }
  }

  /**
   * The message that refuses {@code key}, which {@code what} names as the caller shows it ({@code
   * "property 'keyprefx'"}): the closest key this backend reads and every one, each as {@code show}
   * writes it ({@code key-prefix (keyPrefix)} in Spring's terms).
   */
  public String refusal(String what, String key, Function<String, String> show) {
    String closest = closest(key, names);
    return what
        + " is not read by the "
        + backend
        + " backend"
        + (closest == null ? "" : "; did you mean " + show.apply(closest) + "?")
        + " It reads: "
        + names.stream().map(show).collect(Collectors.joining(", "))
        + note;
  }

  /**
   * The candidate nearest to {@code name}, compared in the relaxed form: by edit distance when it
   * is near enough to be a slip (at most a third of the letters, and at least 2, differ), else one
   * that contains it or is contained in it ({@code user} for {@code username}); null if none is.
   */
  public static @Nullable String closest(String name, Collection<String> candidates) {
    String wanted = uniform(name);
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String candidate : candidates) {
      int d = distance(wanted, uniform(candidate));
      if (d < bestDistance) {
        best = candidate;
        bestDistance = d;
      }
    }
    if (bestDistance <= Math.max(2, wanted.length() / 3)) {
      return best;
    }
    if (wanted.length() < 3) {
      return null;
    }
    for (String candidate : candidates) {
      String other = uniform(candidate);
      if (other.contains(wanted) || wanted.contains(other)) {
        return candidate;
      }
    }
    return null;
  }

  /** Lower case, without dashes and underscores: the form in which Spring compares names. */
  static String uniform(String name) {
    return name.replace("-", "").replace("_", "").toLowerCase(Locale.ROOT);
  }

  /** Levenshtein distance: insertions, deletions and substitutions of one character. */
  private static int distance(String a, String b) {
    int[] previous = new int[b.length() + 1];
    int[] current = new int[b.length() + 1];
    for (int j = 0; j <= b.length(); j++) {
      previous[j] = j;
    }
    for (int i = 1; i <= a.length(); i++) {
      current[0] = i;
      for (int j = 1; j <= b.length(); j++) {
        int substitution = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
        current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
      }
      int[] swap = previous;
      previous = current;
      current = swap;
    }
    return previous[b.length()];
  }
}
