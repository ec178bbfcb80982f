package io.dlock.examples.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.examples.spring.DocSnippets.Kind;
import io.dlock.examples.spring.DocSnippets.Report;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every {@code ```java} block of README.md, docs/*.md and each module's README.md compiles with its
 * imports, or is an excerpt of a compiled source, or says why it is not Java ({@link DocSnippets}
 * has the convention). A planted document with two mistakes is compiled in the same compiler call,
 * so that a checker that found nothing could not pass.
 */
class DocSnippetsTest {
  private static final String PLANTED = "planted/mistakes.md";
  private static final String PLANTED_TEXT =
      """
      # Two mistakes and one correct block

      ```java
      import io.dlock.LockClient;
      import io.dlock.redis.RedisLocks;

      LockClient locks = RedisLocks.newClient("redis://localhost:6379");
      locks.lockk("orders:42");
      ```

      ```java
      import io.dlock.LockClient;

      class Orders {
        void take(LockClient locks) {
          locks.lock("orders:42").acquire(Duration.ofSeconds(1));
        }
      }
      ```

      ```java
      import java.time.Duration;

      Duration wait = Duration.ofSeconds(5);
      ```
      """;

  private static Path root;
  private static Map<String, String> documents;
  private static Report report;

  @BeforeAll
  static void checkTheDocuments() throws IOException {
    root = repositoryRoot();
    documents = documents(root);
    Map<String, String> all = new LinkedHashMap<>(documents);
    all.put(PLANTED, PLANTED_TEXT);
    report = DocSnippets.check(all, root);
  }

  @Test
  void everyJavaBlockOfTheDocsCompilesOrSaysWhyNot() {
    List<String> problems =
        report.problems().stream().filter(p -> !p.startsWith(PLANTED + ":")).toList();
    assertThat(problems)
        .withFailMessage(
            "%d problem(s) in the Java blocks of the docs (convention: DocSnippets):%n%s",
            problems.size(), String.join(System.lineSeparator(), problems))
        .isEmpty();
  }

  @Test
  void everyDocumentWithJavaBlocksHasCompiledOnes() {
    assertThat(documents).containsKeys("README.md", "docs/spring.md");
    for (String file : documents.keySet()) {
      long blocks = report.snippets().stream().filter(s -> s.file().equals(file)).count();
      if (blocks > 0) {
        assertThat(report.count(file, Kind.TYPE) + report.count(file, Kind.STATEMENTS))
            .as("blocks compiled in %s", file)
            .isPositive();
      }
    }
    assertThat(report.count("README.md", Kind.TYPE)).isPositive();
  }

  @Test
  void aPlantedMistakeIsReportedAtItsDocumentLineWithTheCompilersMessage() {
    assertThat(report.problemsOf(PLANTED))
        .hasSize(2)
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith(PLANTED + ":" + lineOf("locks.lockk(") + ": cannot find symbol")
                    .contains("lockk")
                    .contains("(block at line 3, statements)"))
        .anySatisfy(
            p ->
                assertThat(p)
                    .startsWith(PLANTED + ":" + lineOf("acquire(Duration") + ": cannot find symbol")
                    .contains("Duration")
                    .contains("type)"));
    assertThat(report.count(PLANTED, Kind.STATEMENTS)).isEqualTo(2);
  }

  @Test
  void markersAreCheckedWithoutCompiling() {
    String source = "dlock-examples-spring/src/test/java/io/dlock/examples/spring/DocSnippets.java";
    String text =
        """
        ```java not-compiled
        void buy(String sku);
        ```

        ```java not-compiled: a signature, without its class
        void buy(String sku);
        ```

        ```java compiles-maybe
        int x = 1;
        ```

        ```java excerpt-of=SOURCE
        static final String NOT_COMPILED = "not-compiled";
        static final String EXCERPT_OF = "excerpt-of=";
        ```

        ```java excerpt-of=SOURCE
        static final String NOT_COMPILED = "not-compiled";
        static final String EXCERPT_OF = "excerpt=";
        ```

        ```java excerpt-of=no/such/File.java
        int x;
        ```

        ```java
        class Unclosed {
        """
            .replace("SOURCE", source);
    Report markers = DocSnippets.check(Map.of("m.md", text), root);
    assertThat(markers.snippets()).hasSize(6);
    assertThat(markers.count("m.md", Kind.NOT_COMPILED)).isEqualTo(2);
    assertThat(markers.count("m.md", Kind.EXCERPT)).isEqualTo(3);
    assertThat(markers.count("m.md", Kind.UNKNOWN_MARKER)).isEqualTo(1);
    assertThat(markers.problems())
        .containsExactlyInAnyOrder(
            "m.md:1: a block marked 'not-compiled' must say why: ```java not-compiled: <reason>",
            "m.md:9: unknown marker 'compiles-maybe' after ```java (known: 'not-compiled:"
                + " <reason>', 'excerpt-of=<path>')",
            "m.md:20: the excerpt of "
                + source
                + " (block at line 18) differs from it here: 'static final String EXCERPT_OF ="
                + " \"excerpt=\";' is not the source's next line",
            "m.md:23: the source of the excerpt, 'no/such/File.java', does not exist",
            "m.md:27: the ```java block is never closed");
  }

  @Test
  void aBlockStartingWithATypeIsAUnitAndAnyOtherIsStatements() {
    assertThat(DocSnippets.declaresType(List.of("import a.B;", "", "@Service", "class S {}")))
        .isTrue();
    assertThat(
            DocSnippets.declaresType(
                List.of("@SpringBootTest(", "    properties = \"a=b\")", "public final class T {")))
        .isTrue();
    assertThat(DocSnippets.declaresType(List.of("// a comment", "record Point(int x) {}")))
        .isTrue();
    assertThat(DocSnippets.declaresType(List.of("@interface Marker {}"))).isTrue();
    assertThat(DocSnippets.declaresType(List.of("import a.B;", "B b = new B();"))).isFalse();
    assertThat(DocSnippets.declaresType(List.of("classic.run();"))).isFalse();
  }

  private static int lineOf(String text) {
    String[] lines = PLANTED_TEXT.split("\n", -1);
    for (int i = 0; i < lines.length; i++) {
      if (lines[i].contains(text)) {
        return i + 1;
      }
    }
    throw new AssertionError(text);
  }

  /** The repository's root: the test runs in its module's directory, or below it. */
  static Path repositoryRoot() {
    for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
      if (Files.isRegularFile(dir.resolve("README.md"))
          && Files.isDirectory(dir.resolve("docs"))
          && Files.isRegularFile(dir.resolve("mvnw"))) {
        return dir;
      }
    }
    throw new AssertionError("no repository root above " + Path.of("").toAbsolutePath());
  }

  /** README.md, docs/*.md and every module's README.md, by their paths from the root. */
  static Map<String, String> documents(Path root) throws IOException {
    List<Path> files = new ArrayList<>();
    files.add(root.resolve("README.md"));
    try (Stream<Path> docs = Files.list(root.resolve("docs"));
        Stream<Path> modules = Files.list(root)) {
      docs.filter(p -> p.getFileName().toString().endsWith(".md")).sorted().forEach(files::add);
      modules
          .map(m -> m.resolve("README.md"))
          .filter(Files::isRegularFile)
          .sorted()
          .forEach(files::add);
    }
    Map<String, String> documents = new LinkedHashMap<>();
    for (Path file : files) {
      documents.put(
          root.relativize(file).toString().replace('\\', '/'),
          Files.readString(file, StandardCharsets.UTF_8));
    }
    return documents;
  }
}
