package io.dlock.examples.spring;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.FileObject;
import javax.tools.ForwardingJavaFileManager;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileManager;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * The Java snippets of the project's Markdown, checked: every {@code ```java} block of a document
 * either compiles, with its imports, or says why it need not. Its test is {@link DocSnippetsTest};
 * the convention a block follows is told by its fence's info string:
 *
 * <ul>
 *   <li>{@code ```java} and a block that starts (after its imports, comments and annotations) with
 *       a type declaration ({@code class}, {@code interface}, {@code enum}, {@code record}, {@code
 *       @interface}): a compilation unit, compiled as it is;
 *   <li>{@code ```java} and any other block: statements. Its leading {@code import} lines stay at
 *       the top of the file; the rest becomes the body of {@code void snippet() throws Exception}
 *       of a class of its own. Whatever the statements use is declared in the block (a client from
 *       a real factory call, a password from the environment), never supplied by the checker;
 *   <li>{@code ```java excerpt-of=PATH}: lines copied from a source file the build compiles (PATH
 *       from the repository's root); checked to appear there in the same order and next to each
 *       other, indentation and blank lines aside;
 *   <li>{@code ```java not-compiled: REASON}: not Java on its own (a fragment showing a signature,
 *       say); the reason is required.
 * </ul>
 *
 * <p>Every block to compile is a file of its own in a package of its own (so that two blocks may
 * declare the same class name), and all are compiled by one compiler call against this JVM's class
 * path, with no class files written. A compiler error is reported at the line of the Markdown
 * document it comes from.
 */
final class DocSnippets {
  static final String NOT_COMPILED = "not-compiled";
  static final String EXCERPT_OF = "excerpt-of=";

  private static final Pattern FENCE = Pattern.compile("^( {0,3})(`{3,}|~{3,})\\s*(.*)$");
  private static final Pattern IMPORT = Pattern.compile("^import\\s+(static\\s+)?[\\w.*]+\\s*;.*$");
  private static final Pattern MODIFIERS =
      Pattern.compile(
          "^((public|protected|private|abstract|final|sealed|non-sealed|static|strictfp)\\s+)*");
  private static final Pattern TYPE_DECLARATION =
      Pattern.compile("^(class|interface|enum|record|@interface)\\s+([A-Za-z_$][\\w$]*)");
  private static final Pattern PUBLIC_TYPE =
      Pattern.compile(
          "^public\\s+((abstract|final|sealed|non-sealed|static|strictfp)\\s+)*"
              + "(class|interface|enum|record|@interface)\\s+([A-Za-z_$][\\w$]*)");

  private DocSnippets() {}

  /** How a block is checked. */
  enum Kind {
    /** A compilation unit: compiled as it is. */
    TYPE,
    /** Statements: compiled as the body of a method. */
    STATEMENTS,
    /** Lines of a source file the build compiles: found there. */
    EXCERPT,
    /** Not checked, for the reason it gives. */
    NOT_COMPILED,
    /** A fence with a marker this checker does not know: refused. */
    UNKNOWN_MARKER
  }

  /**
   * One {@code ```java} block.
   *
   * @param file the document, as named in reports (a path from the repository's root)
   * @param fenceLine the line of the opening fence, counted from 1
   * @param info what follows {@code java} on the fence line
   * @param lines the block's lines, without the fences and without the fence's indentation
   */
  record Snippet(String file, int fenceLine, String info, List<String> lines) {
    /** Where the block starts, for a report: {@code docs/spring.md:206}. */
    String where() {
      return file + ":" + fenceLine;
    }

    /** The line of the document that holds {@code lines.get(index)}. */
    int documentLine(int index) {
      return fenceLine + 1 + index;
    }

    Kind kind() {
      if (info.equals(NOT_COMPILED) || info.matches(Pattern.quote(NOT_COMPILED) + "[:\\s].*")) {
        return Kind.NOT_COMPILED;
      }
      if (info.startsWith(EXCERPT_OF)) {
        return Kind.EXCERPT;
      }
      if (!info.isEmpty()) {
        return Kind.UNKNOWN_MARKER;
      }
      return declaresType(lines) ? Kind.TYPE : Kind.STATEMENTS;
    }

    /** The reason a {@link Kind#NOT_COMPILED} block gives, or empty. */
    String reason() {
      String rest = info.substring(Math.min(info.length(), NOT_COMPILED.length())).strip();
      return rest.startsWith(":") ? rest.substring(1).strip() : rest;
    }
  }

  /**
   * What the check found.
   *
   * @param snippets every {@code ```java} block, in document order
   * @param problems one entry per problem, each starting with {@code file:line: }
   */
  record Report(List<Snippet> snippets, List<String> problems) {
    long count(String file, Kind kind) {
      return snippets.stream().filter(s -> s.file().equals(file) && s.kind() == kind).count();
    }

    List<String> problemsOf(String file) {
      return problems.stream().filter(p -> p.startsWith(file + ":")).toList();
    }
  }

  /**
   * Checks every {@code ```java} block of {@code documents} (name to Markdown text): compiles those
   * to compile in one compiler call, and finds each excerpt in its source under {@code root}.
   */
  static Report check(Map<String, String> documents, Path root) {
    List<String> problems = new ArrayList<>();
    List<Snippet> snippets = new ArrayList<>();
    documents.forEach((file, text) -> snippets.addAll(extract(file, text, problems)));
    List<Snippet> toCompile = new ArrayList<>();
    for (Snippet s : snippets) {
      switch (s.kind()) {
        case TYPE, STATEMENTS -> toCompile.add(s);
        case EXCERPT -> problems.addAll(checkExcerpt(s, root));
        case NOT_COMPILED -> {
          if (s.reason().isEmpty()) {
            problems.add(
                s.where()
                    + ": a block marked '"
                    + NOT_COMPILED
                    + "' must say why: ```java "
                    + NOT_COMPILED
                    + ": <reason>");
          }
        }
        case UNKNOWN_MARKER ->
            problems.add(
                s.where()
                    + ": unknown marker '"
                    + s.info()
                    + "' after ```java (known: '"
                    + NOT_COMPILED
                    + ": <reason>', '"
                    + EXCERPT_OF
                    + "<path>')");
      }
    }
    problems.addAll(compile(toCompile));
    return new Report(List.copyOf(snippets), List.copyOf(problems));
  }

  /**
   * The {@code ```java} blocks of one Markdown document; an unclosed one is reported in {@code
   * problems}. Blocks of other languages are skipped whole, so that a {@code ```java} line inside
   * one is not taken for a block.
   */
  static List<Snippet> extract(String file, String markdown, List<String> problems) {
    List<Snippet> found = new ArrayList<>();
    String[] lines = markdown.split("\r?\n", -1);
    for (int i = 0; i < lines.length; i++) {
      Matcher open = FENCE.matcher(lines[i]);
      if (!open.matches()) {
        continue;
      }
      int indent = open.group(1).length();
      String fence = open.group(2);
      String info = open.group(3).strip();
      int close = i + 1;
      while (close < lines.length && !closes(lines[close], fence)) {
        close++;
      }
      boolean java = info.equals("java") || info.startsWith("java ");
      if (close == lines.length) {
        if (java) {
          problems.add(file + ":" + (i + 1) + ": the ```java block is never closed");
        }
        break;
      }
      if (java) {
        List<String> body = new ArrayList<>();
        for (int j = i + 1; j < close; j++) {
          body.add(unindent(lines[j], indent));
        }
        found.add(new Snippet(file, i + 1, info.substring(4).strip(), List.copyOf(body)));
      }
      i = close;
    }
    return found;
  }

  private static boolean closes(String line, String fence) {
    String t = line.strip();
    return t.length() >= fence.length()
        && t.chars().allMatch(c -> c == fence.charAt(0))
        && line.indexOf(fence.charAt(0)) <= 3;
  }

  private static String unindent(String line, int indent) {
    int n = 0;
    while (n < indent && n < line.length() && line.charAt(n) == ' ') {
      n++;
    }
    return line.substring(n);
  }

  /** Whether the first declaration of the block, after its imports, is a type's. */
  static boolean declaresType(List<String> lines) {
    int depth = 0; // parentheses open in an annotation spread over lines
    for (String line : lines) {
      String t = line.strip();
      if (depth > 0) {
        depth += parenthesesOpened(t);
        continue;
      }
      if (t.isEmpty() || t.startsWith("//") || t.startsWith("/*") || t.startsWith("*")) {
        continue;
      }
      if (IMPORT.matcher(t).matches()) {
        continue;
      }
      // Annotations before the declaration, on lines of their own or on its line.
      while (t.startsWith("@") && !t.startsWith("@interface")) {
        int end = annotationEnd(t);
        if (end < 0) { // its arguments go on over the next lines
          depth = parenthesesOpened(t);
          t = "";
          break;
        }
        t = t.substring(end).strip();
      }
      if (t.isEmpty()) {
        continue;
      }
      Matcher modifiers = MODIFIERS.matcher(t);
      modifiers.lookingAt();
      return TYPE_DECLARATION.matcher(t.substring(modifiers.end())).lookingAt();
    }
    return false;
  }

  /** The index just past the annotation that starts {@code t}, or -1 if it is not closed on it. */
  private static int annotationEnd(String t) {
    int i = 1;
    while (i < t.length() && (Character.isJavaIdentifierPart(t.charAt(i)) || t.charAt(i) == '.')) {
      i++;
    }
    if (i < t.length() && t.charAt(i) == '(') {
      int depth = 0;
      for (; i < t.length(); i++) {
        if (t.charAt(i) == '(') {
          depth++;
        } else if (t.charAt(i) == ')' && --depth == 0) {
          return i + 1;
        }
      }
      return -1;
    }
    return i;
  }

  private static int parenthesesOpened(String t) {
    return (int)
        (t.chars().filter(c -> c == '(').count() - t.chars().filter(c -> c == ')').count());
  }

  /** The problems of an excerpt: its source missing, or its lines not found there in a run. */
  static List<String> checkExcerpt(Snippet s, Path root) {
    String path = s.info().substring(EXCERPT_OF.length()).strip();
    Path source = root.resolve(path).normalize();
    if (path.isEmpty() || !source.startsWith(root) || !Files.isRegularFile(source)) {
      return List.of(s.where() + ": the source of the excerpt, '" + path + "', does not exist");
    }
    List<String> wanted = s.lines().stream().map(String::strip).filter(l -> !l.isEmpty()).toList();
    List<String> have;
    try {
      have =
          Files.readAllLines(source, StandardCharsets.UTF_8).stream()
              .map(String::strip)
              .filter(l -> !l.isEmpty())
              .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    if (wanted.isEmpty()) {
      return List.of(s.where() + ": the excerpt is empty");
    }
    if (Collections.indexOfSubList(have, wanted) >= 0) {
      return List.of();
    }
    // Name the first line that does not follow: the longest prefix found in a run, plus one.
    int longest = 0;
    for (int n = 1; n <= wanted.size(); n++) {
      if (Collections.indexOfSubList(have, wanted.subList(0, n)) < 0) {
        break;
      }
      longest = n;
    }
    String missing = wanted.get(longest);
    int line = s.fenceLine() + 1;
    for (int i = 0, seen = 0; i < s.lines().size(); i++) {
      if (!s.lines().get(i).isBlank() && seen++ == longest) {
        line = s.documentLine(i);
        break;
      }
    }
    return List.of(
        s.file()
            + ":"
            + line
            + ": the excerpt of "
            + path
            + " (block at line "
            + s.fenceLine()
            + ") differs from it here: '"
            + missing
            + "' is not the source's next line");
  }

  /** Compiles {@code snippets} in one compiler call; the errors, at their documents' lines. */
  static List<String> compile(List<Snippet> snippets) {
    if (snippets.isEmpty()) {
      return List.of();
    }
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    if (javac == null) {
      return List.of("(all): no Java compiler in this JVM (a JRE?): the snippets need a JDK");
    }
    Map<URI, Unit> units = new HashMap<>();
    for (int i = 0; i < snippets.size(); i++) {
      Unit unit = Unit.of(snippets.get(i), "snippets.b" + i);
      units.put(unit.toUri(), unit);
    }
    DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
    List<String> options =
        List.of(
            "--release",
            "17",
            "-classpath",
            System.getProperty("java.class.path"),
            "-proc:none",
            "-implicit:none",
            "-nowarn",
            "-Xlint:none",
            "-Xmaxerrs", // every error, not the first 100
            "100000",
            // Nothing is run: stop after the checks, before code generation. And go on to them
            // after a syntax error, so that one block's typo hides no other block's errors.
            "-XDshould-stop.ifNoError=FLOW",
            "-XDshould-stop.ifError=FLOW");
    try (StandardJavaFileManager standard =
            javac.getStandardFileManager(diagnostics, Locale.ROOT, StandardCharsets.UTF_8);
        JavaFileManager discarding = new DiscardingFileManager(standard)) {
      javac.getTask(null, discarding, diagnostics, options, null, units.values()).call();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<String> problems = new ArrayList<>();
    for (Diagnostic<? extends JavaFileObject> d : diagnostics.getDiagnostics()) {
      if (d.getKind() != Diagnostic.Kind.ERROR) {
        continue;
      }
      Unit unit = d.getSource() == null ? null : units.get(d.getSource().toUri());
      String message = d.getMessage(Locale.ROOT);
      if (unit == null) {
        problems.add("(javac): " + message);
        continue;
      }
      int index = (int) d.getLineNumber() - 1;
      int documentLine =
          index >= 0 && index < unit.lineMap.length && unit.lineMap[index] > 0
              ? unit.lineMap[index]
              : unit.snippet.fenceLine();
      problems.add(
          unit.snippet.file()
              + ":"
              + documentLine
              + ": "
              + message
              + " (block at line "
              + unit.snippet.fenceLine()
              + ", "
              + unit.snippet.kind().name().toLowerCase(Locale.ROOT)
              + ")");
    }
    return problems;
  }

  /** One block as a source file in memory, with each of its lines' line in the document. */
  private static final class Unit extends SimpleJavaFileObject {
    final Snippet snippet;
    final String code;
    final int[] lineMap;

    private Unit(Snippet snippet, String path, List<String> lines, List<Integer> documentLines) {
      super(URI.create("string:///" + path), JavaFileObject.Kind.SOURCE);
      this.snippet = snippet;
      this.code = String.join("\n", lines) + "\n";
      this.lineMap = documentLines.stream().mapToInt(Integer::intValue).toArray();
    }

    static Unit of(Snippet snippet, String packageName) {
      List<String> lines = new ArrayList<>();
      List<Integer> at = new ArrayList<>();
      lines.add("package " + packageName + ";");
      at.add(0);
      List<String> body = snippet.lines();
      String fileName = "Snippet";
      if (snippet.kind() == DocSnippets.Kind.TYPE) {
        for (int i = 0; i < body.size(); i++) {
          lines.add(body.get(i));
          at.add(snippet.documentLine(i));
          Matcher named = PUBLIC_TYPE.matcher(body.get(i));
          if (named.lookingAt() && fileName.equals("Snippet")) {
            fileName = named.group(4); // a public class must live in a file of its name
          }
        }
      } else {
        int first = 0; // imports, and the blank lines and comments among them, stay on top
        while (first < body.size()
            && (body.get(first).isBlank()
                || body.get(first).strip().startsWith("//")
                || IMPORT.matcher(body.get(first).strip()).matches())) {
          first++;
        }
        for (int i = 0; i < first; i++) {
          lines.add(body.get(i));
          at.add(snippet.documentLine(i));
        }
        lines.add("class Snippet {");
        at.add(0);
        lines.add("void snippet() throws Exception {");
        at.add(0);
        for (int i = first; i < body.size(); i++) {
          lines.add(body.get(i));
          at.add(snippet.documentLine(i));
        }
        lines.add("}}");
        at.add(0);
      }
      return new Unit(snippet, packageName.replace('.', '/') + "/" + fileName + ".java", lines, at);
    }

    @Override
    public CharSequence getCharContent(boolean ignoreEncodingErrors) {
      return code;
    }
  }

  /** Hands the compiler outputs that go nowhere: no class file is written. */
  private static final class DiscardingFileManager
      extends ForwardingJavaFileManager<StandardJavaFileManager> {
    DiscardingFileManager(StandardJavaFileManager standard) {
      super(standard);
    }

    @Override
    public JavaFileObject getJavaFileForOutput(
        Location location, String className, JavaFileObject.Kind kind, FileObject sibling) {
      return new SimpleJavaFileObject(
          URI.create("discarded:///" + className.replace('.', '/') + kind.extension), kind) {
        @Override
        public OutputStream openOutputStream() {
          return OutputStream.nullOutputStream();
        }
      };
    }
  }
}
