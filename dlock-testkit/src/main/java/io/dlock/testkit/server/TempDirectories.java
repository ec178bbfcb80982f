package io.dlock.testkit.server;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** The temporary directories of the server fixtures (data, binaries, logs). */
final class TempDirectories {
  private TempDirectories() {}

  /**
   * Deletes {@code dir} and everything in it, as far as it can: a directory left behind in the temp
   * directory is harmless, and the callers are shutting a server down.
   */
  static void deleteQuietly(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException | RuntimeException e) {
      // best effort (see above)
    }
  }
}
