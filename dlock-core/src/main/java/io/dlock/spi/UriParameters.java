package io.dlock.spi;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * The parameters of backend URIs and properties, read the same way by every backend: a URI's query
 * split into decoded key/value pairs, refusing unknown and repeated keys; a parameter's text read
 * as a duration or a flag; a value checked against its range. Every error is an {@link
 * IllegalArgumentException} naming the parameter (and the range or the known keys).
 *
 * <p>Only the parameters: each backend keeps its own URI syntax (scheme, hosts, paths,
 * credentials).
 */
public final class UriParameters {
  private UriParameters() {}

  /**
   * The parameters of a URI's query ({@code a=1&b=2}, without the {@code ?}), in their order, keys
   * and values percent-decoded as UTF-8 ({@code +} stays a plus: a URI query is not a form). An
   * empty parameter ({@code a=1&&b=2}) is skipped; a key without {@code =} has the value {@code
   * ""}.
   *
   * @param what what the query belongs to, for messages: {@code "redlock URI"}
   * @param known the keys the URI takes
   * @throws IllegalArgumentException naming the key if a key is not known, is given more than once,
   *     or a key or value has a malformed {@code %} escape
   */
  public static Map<String, String> parseQuery(
      String query, String what, Collection<String> known) {
    Objects.requireNonNull(query, "query");
    Map<String, String> parameters = new LinkedHashMap<>();
    for (String parameter : query.split("&")) {
      if (parameter.isEmpty()) {
        continue;
      }
      int eq = parameter.indexOf('=');
      String rawKey = eq < 0 ? parameter : parameter.substring(0, eq);
      String key = decode(rawKey, rawKey, what);
      String value = eq < 0 ? "" : decode(parameter.substring(eq + 1), key, what);
      if (!known.contains(key)) {
        throw new IllegalArgumentException(
            what + " parameter '" + key + "' is not known; known: " + String.join(", ", known));
      }
      if (parameters.putIfAbsent(key, value) != null) {
        throw new IllegalArgumentException(
            what + " parameter '" + key + "' is given more than once");
      }
    }
    return parameters;
  }

  private static String decode(String text, String key, String what) {
    try {
      return URLDecoder.decode(text.replace("+", "%2B"), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          what + " parameter '" + key + "' has a malformed %-escape", e);
    }
  }

  /**
   * An ISO-8601 duration ({@code PT0.2S}, {@code PT2S}), as {@link Duration#parse} reads it.
   *
   * @throws IllegalArgumentException naming {@code name} if {@code value} is not one
   */
  public static Duration isoDuration(String name, String value) {
    Objects.requireNonNull(value, name);
    try {
      return Duration.parse(value);
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException(
          name + " must be an ISO-8601 duration such as PT0.2S or PT2S, but was '" + value + "'",
          e);
    }
  }

  /**
   * An ISO-8601 duration ({@code PT10S}) or a whole number of milliseconds ({@code 10000}),
   * surrounding whitespace ignored.
   *
   * @throws IllegalArgumentException naming {@code name} if {@code value} is neither
   */
  public static Duration durationOrMillis(String name, String value) {
    Objects.requireNonNull(value, name);
    String v = value.trim();
    try {
      if (v.matches("\\d+")) {
        return Duration.ofMillis(Long.parseLong(v));
      }
      return Duration.parse(v);
    } catch (DateTimeParseException | NumberFormatException e) {
      throw new IllegalArgumentException(
          name + " must be an ISO-8601 duration or milliseconds, but was '" + value + "'", e);
    }
  }

  /**
   * {@code true} or {@code false}, in any case, surrounding whitespace ignored.
   *
   * @throws IllegalArgumentException naming {@code name} if {@code value} is neither
   */
  public static boolean flag(String name, String value) {
    Objects.requireNonNull(value, name);
    return switch (value.trim().toLowerCase(Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default ->
          throw new IllegalArgumentException(
              name + " must be true or false, but was '" + value + "'");
    };
  }

  /**
   * {@code value}, checked to be from {@code min} to {@code max}.
   *
   * @throws NullPointerException naming {@code name} if {@code value} is null
   * @throws IllegalArgumentException naming {@code name} and the range if it is outside
   */
  public static Duration checkRange(String name, Duration value, Duration min, Duration max) {
    Objects.requireNonNull(value, name);
    if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
      throw new IllegalArgumentException(
          name + " must be from " + min + " to " + max + ", but was " + value);
    }
    return value;
  }

  /**
   * A whole number from {@code min} to {@code max}, surrounding whitespace ignored.
   *
   * @throws IllegalArgumentException naming {@code name} and the range if {@code value} is not a
   *     number or is outside
   */
  public static int intIn(String name, String value, int min, int max) {
    Objects.requireNonNull(value, name);
    int parsed;
    try {
      parsed = Integer.parseInt(value.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          name + " must be a whole number from " + min + " to " + max + ", but was '" + value + "'",
          e);
    }
    return checkRange(name, parsed, min, max);
  }

  /**
   * {@code value}, checked to be from {@code min} to {@code max}.
   *
   * @throws IllegalArgumentException naming {@code name} and the range if it is outside
   */
  public static int checkRange(String name, int value, int min, int max) {
    if (value < min || value > max) {
      throw new IllegalArgumentException(
          name + " must be from " + min + " to " + max + ", but was " + value);
    }
    return value;
  }
}
