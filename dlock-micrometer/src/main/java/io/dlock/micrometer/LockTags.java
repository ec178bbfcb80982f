package io.dlock.micrometer;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * What a lock's name becomes as the {@code lock} tag of its meters. Lock names carry keys ({@code
 * stock:sku-42}), and a tag with one value per name would make a time series per key: every mapping
 * here has a bounded set of values.
 */
public final class LockTags {
  /** The tag value of a name that no pattern matches. */
  public static final String OTHER = "other";

  /** The tag value of every name under {@link #none()}. */
  public static final String ALL = "all";

  private LockTags() {}

  /** Every lock under one tag value, {@value #ALL}: the default. */
  public static Function<String, String> none() {
    return name -> ALL;
  }

  /**
   * Each name under the first of {@code patterns} that matches it, {@value #OTHER} if none does. A
   * pattern is a lock name with {@code *} for any characters and {@code ?} for one, such as {@code
   * stock:*}; the pattern itself is the tag value.
   *
   * @param patterns from 1 to 1000 patterns, none blank
   */
  public static Function<String, String> patterns(String... patterns) {
    Objects.requireNonNull(patterns, "patterns");
    if (patterns.length < 1 || patterns.length > 1000) {
      throw new IllegalArgumentException(
          "patterns must hold from 1 to 1000 patterns, but held " + patterns.length);
    }
    List<String> tags = new ArrayList<>(patterns.length);
    List<Pattern> compiled = new ArrayList<>(patterns.length);
    for (String pattern : patterns) {
      if (pattern == null || pattern.isBlank()) {
        throw new IllegalArgumentException("patterns must not be null or blank, but one was");
      }
      tags.add(pattern);
      compiled.add(glob(pattern));
    }
    return name -> {
      for (int i = 0; i < compiled.size(); i++) {
        if (compiled.get(i).matcher(name).matches()) {
          return tags.get(i);
        }
      }
      return OTHER;
    };
  }

  private static Pattern glob(String pattern) {
    StringBuilder regex = new StringBuilder();
    StringBuilder literal = new StringBuilder();
    for (char c : pattern.toCharArray()) {
      if (c == '*' || c == '?') {
        if (literal.length() > 0) {
          regex.append(Pattern.quote(literal.toString()));
          literal.setLength(0);
        }
        regex.append(c == '*' ? ".*" : ".");
      } else {
        literal.append(c);
      }
    }
    if (literal.length() > 0) {
      regex.append(Pattern.quote(literal.toString()));
    }
    return Pattern.compile(regex.toString(), Pattern.DOTALL);
  }
}
