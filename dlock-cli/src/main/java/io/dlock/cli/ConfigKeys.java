package io.dlock.cli;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * The keys a {@code --config} file may hold for each kind of backend URI. The backend modules read
 * only the keys they know and skip the rest, so a misspelt {@code createschema=true} or {@code
 * keyprefix=} would silently do nothing: the command refuses any other key before it connects,
 * naming it and the known key closest to it.
 *
 * <p>The lists follow what each provider reads ({@code JdbcBackendProvider}, {@code
 * RedisBackendProvider}, {@code ZooKeeperBackendProvider}); a key added there must be added here.
 */
final class ConfigKeys {
  /** Every file may name the backend itself. */
  private static final String BACKEND = "backend";

  private record Kind(List<String> prefixes, String label, List<String> keys, String note) {}

  private static final List<Kind> KINDS =
      List.of(
          new Kind(
              List.of("redlock://", "redlocks://"),
              "Redlock",
              List.of("keyPrefix", "nodeTimeout"),
              " (Redlock takes its credentials in the URI)"),
          new Kind(
              List.of(
                  "redis://",
                  "rediss://",
                  "redis-sentinel://",
                  "redis-cluster://",
                  "rediss-cluster://"),
              "Redis",
              List.of("username", "password", "keyPrefix", "commandTimeout"),
              ""),
          new Kind(
              List.of("zk://"),
              "ZooKeeper",
              List.of(
                  "username",
                  "password",
                  "acl",
                  "sessionTimeout",
                  "connectionTimeout",
                  "followEnsembleChanges",
                  "ownerIdsSharedAcrossClients"),
              ""),
          new Kind(
              List.of("jdbc:"),
              "JDBC",
              List.of("username", "password", "mode", "table", "createSchema", "database"),
              ""));

  private ConfigKeys() {}

  /**
   * Refuses a key of {@code properties} that the backend of {@code uri} does not read. A URI of no
   * known kind is left to {@link io.dlock.LockClients#connect}, which names the supported ones.
   *
   * @throws IllegalArgumentException naming the file, the key, the closest known key and all of
   *     them
   */
  static void check(String uri, Map<String, String> properties, @Nullable Path file) {
    Kind kind = kindOf(uri);
    if (kind == null) {
      return;
    }
    Set<String> known = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    known.add(BACKEND);
    known.addAll(kind.keys());
    for (String key : new TreeSet<>(properties.keySet())) {
      if (!kind.keys().contains(key) && !key.equals(BACKEND)) {
        String closest = closest(key, known);
        throw new IllegalArgumentException(
            "--config "
                + file
                + ": unknown key '"
                + key
                + "' for a "
                + kind.label()
                + " backend"
                + (closest == null ? "" : "; did you mean '" + closest + "'?")
                + " Known keys: "
                + String.join(", ", known)
                + kind.note());
      }
    }
  }

  private static @Nullable Kind kindOf(String uri) {
    String lower = uri.toLowerCase(Locale.ROOT);
    for (Kind kind : KINDS) {
      if (kind.prefixes().stream().anyMatch(lower::startsWith)) {
        return kind;
      }
    }
    return null;
  }

  /**
   * The known key nearest to {@code key}, ignoring case: by edit distance if it is near enough to
   * be a slip (at most a third of the key's letters, and at least 2, differ), else one that
   * contains the key or is contained in it ({@code user} for {@code username}, {@code prefix} for
   * {@code keyPrefix}); null if none is.
   */
  static @Nullable String closest(String key, Set<String> known) {
    String lower = key.toLowerCase(Locale.ROOT);
    String best = null;
    int bestDistance = Integer.MAX_VALUE;
    for (String candidate : known) {
      int d = distance(lower, candidate.toLowerCase(Locale.ROOT));
      if (d < bestDistance) {
        best = candidate;
        bestDistance = d;
      }
    }
    if (bestDistance <= Math.max(2, key.length() / 3)) {
      return best;
    }
    if (lower.length() < 3) {
      return null;
    }
    for (String candidate : known) {
      String other = candidate.toLowerCase(Locale.ROOT);
      if (other.contains(lower) || lower.contains(other)) {
        return candidate;
      }
    }
    return null;
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
