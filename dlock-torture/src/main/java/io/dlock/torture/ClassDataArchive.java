package io.dlock.torture;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Worker start-up costs more CPU than a short run's contention: the first worker of a backend
 * records the classes it loads in a class-data archive when it exits, and later workers map it
 * (AppCDS), starting about twice as fast. A writer killed before it exits leaves no archive, and
 * the next worker records one instead. The archive outlives a run: every run of every target of the
 * same client (its {@linkplain #family family}) in this JVM, and in later ones with the same
 * directory, shares it.
 */
final class ClassDataArchive {
  private static final String RECORD = "-XX:ArchiveClassesAtExit=";

  /** Per backend: the worker that records the class-data archive, while it has none yet. */
  private static final Map<String, Process> WRITERS = new HashMap<>();

  private ClassDataArchive() {}

  /** The JVM options of a target's next worker: map the archive, record it, or neither. */
  static List<String> options(Path directory, String target) {
    String backend = family(target);
    Path archive = directory.resolve(backend + "-worker.jsa");
    if (Files.isRegularFile(archive)) {
      return List.of("-XX:SharedArchiveFile=" + archive);
    }
    Process writer = WRITERS.get(backend);
    if (writer != null && writer.isAlive()) {
      return List.of();
    }
    WRITERS.remove(backend);
    return List.of(RECORD + archive);
  }

  /** A worker of {@code backend} started with {@code command}; it may be the archive's writer. */
  static void started(String target, List<String> command, Process process) {
    if (command.stream().anyMatch(c -> c.startsWith(RECORD))) {
      WRITERS.put(family(target), process);
    }
  }

  /**
   * The targets whose workers load the same classes: those of one client and driver ({@code
   * redis-owner-id} and {@code redis-external} are {@code redis}, {@code mysql-row} is {@code
   * mysql}), the idempotency ledgers each on their own. A class the archive lacks is loaded from
   * the jar as usual: sharing costs nothing in correctness.
   */
  static String family(String target) {
    if (target.startsWith("idempotency-")) {
      return target;
    }
    int dash = target.indexOf('-');
    return dash < 0 ? target : target.substring(0, dash);
  }
}
