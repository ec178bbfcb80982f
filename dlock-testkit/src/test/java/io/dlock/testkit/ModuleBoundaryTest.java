package io.dlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The boundary that dlock-core's module-info draws for module-path users, enforced for the whole
 * build (whose modules compile on the class path): no module but dlock-core names the
 * implementation package {@code io.dlock.core}; they see the API ({@code io.dlock}) and the SPI
 * ({@code io.dlock.spi}) only.
 */
class ModuleBoundaryTest {
  /** Spelled in two parts, so that this file does not name it. */
  private static final String IMPLEMENTATION = "io.dlock" + ".core.";

  @Test
  void noModuleButTheCoreNamesTheImplementation() throws IOException {
    Path root = Path.of("").toAbsolutePath().getParent(); // tests run in their module's folder
    assertThat(root.resolve("dlock-core/src/main/java/module-info.java")).exists();
    List<String> offenders;
    try (Stream<Path> files = Files.walk(root)) {
      offenders =
          files
              .filter(p -> p.toString().endsWith(".java"))
              .filter(p -> p.toString().contains("/src/"))
              .filter(p -> !root.relativize(p).startsWith("dlock-core"))
              .filter(p -> !p.toString().contains("/target/"))
              .filter(ModuleBoundaryTest::namesTheImplementation)
              .map(p -> root.relativize(p).toString())
              .toList();
    }
    assertThat(offenders).as("sources outside dlock-core that import io.dlock.core").isEmpty();
  }

  private static boolean namesTheImplementation(Path file) {
    try {
      return Files.readString(file).contains(IMPLEMENTATION);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
