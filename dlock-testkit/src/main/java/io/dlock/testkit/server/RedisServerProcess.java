package io.dlock.testkit.server;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A real {@code redis-server} process on a free loopback port, with nothing kept on disk.
 *
 * <p>The binary is, in order: the path in the system property {@code dlock.redis.server} or the
 * environment variable {@code DLOCK_REDIS_SERVER}; {@code redis-server} on the PATH; the static
 * Linux x86-64 binary shipped in the Maven Central artifact {@code org.signal:embedded-redis}
 * (Redis 7.0), extracted to a temporary file. Setting the property to {@code embedded} forces the
 * last.
 */
public final class RedisServerProcess implements AutoCloseable {
  private static final String SHIPPED_BINARY = "redis-server-7.0.15-linux-amd64";
  private static final Duration START_TIMEOUT = Duration.ofSeconds(20);

  /**
   * Every server process this JVM started and has not stopped: killed when the JVM exits, even by
   * {@code System.exit} or Ctrl-C, so that no redis-server outlives its test or demo.
   */
  private static final java.util.Set<Process> LIVE =
      java.util.concurrent.ConcurrentHashMap.newKeySet();

  static {
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(() -> LIVE.forEach(Process::destroyForcibly), "dlock-redis-server-reaper"));
  }

  private final Path binary;
  private final int port;
  private final Path workDir;
  private final List<String> extraArgs;
  private final @Nullable String configFile;
  private @Nullable Process process;

  private RedisServerProcess(
      Path binary, int port, List<String> extraArgs, @Nullable String configText) {
    this.binary = binary;
    this.port = port;
    this.extraArgs = List.copyOf(extraArgs);
    try {
      this.workDir = Files.createTempDirectory("dlock-redis-" + port + "-");
      if (configText != null) {
        Path config = workDir.resolve("redis.conf");
        Files.writeString(config, configText);
        this.configFile = config.toString();
      } else {
        this.configFile = null;
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Starts a Sentinel on a free loopback port that monitors the primary {@code masterName} at
   * {@code masterPort}, declaring it down after 500 ms of silence.
   *
   * @param quorum how many Sentinels must agree that the primary is down
   */
  public static RedisServerProcess startSentinel(String masterName, int masterPort, int quorum) {
    String config =
        String.join(
            "\n",
            "sentinel monitor " + masterName + " 127.0.0.1 " + masterPort + " " + quorum,
            "sentinel down-after-milliseconds " + masterName + " 500",
            "sentinel failover-timeout " + masterName + " 2000",
            "sentinel parallel-syncs " + masterName + " 1",
            "");
    RedisServerProcess sentinel =
        new RedisServerProcess(resolveBinary(), freePort(), List.of("--sentinel"), config);
    sentinel.startProcess();
    return sentinel;
  }

  /** Starts a server on a free loopback port and waits until it answers PING. */
  public static RedisServerProcess start(String... extraArgs) {
    RedisServerProcess server =
        new RedisServerProcess(resolveBinary(), freePort(), List.of(extraArgs), null);
    server.startProcess();
    return server;
  }

  /** The port the server listens on (127.0.0.1). */
  public int port() {
    return port;
  }

  /** {@code redis://127.0.0.1:port}. */
  public String uri() {
    return "redis://127.0.0.1:" + port;
  }

  /** The binary this server runs. */
  public Path binary() {
    return binary;
  }

  public boolean isRunning() {
    Process p = process;
    return p != null && p.isAlive();
  }

  /** Stops the server at once (SIGKILL): clients see the connection drop. Nothing is kept. */
  public void kill() {
    Process p = process;
    if (p != null) {
      p.destroyForcibly();
      waitFor(p);
      LIVE.remove(p);
      process = null;
    }
  }

  /** Starts the server again on the same port, empty. */
  public void restart() {
    kill();
    startProcess();
  }

  /** Sends SIGSTOP: the server stops answering but keeps its connections. */
  public void pause() {
    signal("STOP");
  }

  /** Sends SIGCONT after {@link #pause()}. */
  public void resume() {
    signal("CONT");
  }

  /** Runs one command over a raw connection (RESP), returning the reply line(s) as text. */
  public String command(String... args) {
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
      socket.setSoTimeout(5000);
      OutputStream out = socket.getOutputStream();
      StringBuilder request = new StringBuilder("*" + args.length + "\r\n");
      for (String arg : args) {
        byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
        request.append('$').append(bytes.length).append("\r\n").append(arg).append("\r\n");
      }
      out.write(request.toString().getBytes(StandardCharsets.UTF_8));
      out.flush();
      InputStream in = socket.getInputStream();
      byte[] buffer = new byte[8192];
      int n = in.read(buffer);
      return n <= 0 ? "" : new String(buffer, 0, n, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("Redis on port " + port + " did not answer", e);
    }
  }

  @Override
  public void close() {
    kill();
    TempDirectories.deleteQuietly(workDir);
  }

  private void startProcess() {
    List<String> command = new ArrayList<>();
    command.add(binary.toString());
    if (configFile != null) {
      command.add(configFile); // a Sentinel keeps its state in its configuration file
    }
    command.addAll(
        List.of(
            "--port", Integer.toString(port),
            "--bind", "127.0.0.1",
            "--dir", workDir.toString(),
            "--daemonize", "no",
            "--protected-mode", "no",
            "--loglevel", "warning"));
    if (configFile == null) {
      // Nothing on disk: a restart is a restart without persistence.
      command.addAll(List.of("--save", "", "--appendonly", "no"));
    }
    command.addAll(extraArgs);
    try {
      process =
          new ProcessBuilder(command)
              .redirectErrorStream(true)
              .redirectOutput(workDir.resolve("redis.log").toFile())
              .start();
      LIVE.add(process);
    } catch (IOException e) {
      throw new UncheckedIOException("Cannot start " + binary, e);
    }
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      Process p = process;
      if (p == null || !p.isAlive()) {
        throw new IllegalStateException(
            "redis-server exited at start on port " + port + ": " + readLog());
      }
      if (answersPing()) {
        return;
      }
      try {
        // Polling a starting process is the only way to know it listens; 20 ms steps.
        TimeUnit.MILLISECONDS.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("Interrupted while starting redis-server", e);
      }
    }
    throw new IllegalStateException(
        "redis-server did not answer on port " + port + " within " + START_TIMEOUT);
  }

  private boolean answersPing() {
    try {
      return command("PING").startsWith("+PONG");
    } catch (UncheckedIOException e) {
      return false;
    }
  }

  private String readLog() {
    try {
      return Files.readString(workDir.resolve("redis.log"));
    } catch (IOException e) {
      return "(no log)";
    }
  }

  private void signal(String signal) {
    Process p = process;
    if (p == null) {
      throw new IllegalStateException("redis-server is not running");
    }
    try {
      Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).start();
      waitFor(kill);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void waitFor(Process p) {
    try {
      p.waitFor(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Starts a Redis Cluster node on a free loopback port whose cluster bus port (the port + 10000,
   * which Redis before 7.0 cannot move) is free too, and waits until it answers PING.
   */
  public static RedisServerProcess startClusterNode(String... extraArgs) {
    RedisServerProcess server =
        new RedisServerProcess(resolveBinary(), freeClusterPort(), List.of(extraArgs), null);
    server.startProcess();
    return server;
  }

  /** A port that was free a moment ago on 127.0.0.1, as was the port 10000 above it. */
  static int freeClusterPort() {
    for (int attempt = 0; attempt < 100; attempt++) {
      int port = freePort();
      if (port + 10000 <= 65535 && isFree(port + 10000)) {
        return port;
      }
    }
    throw new IllegalStateException(
        "no free loopback port with a free cluster bus port (port + 10000) in 100 tries");
  }

  private static boolean isFree(int port) {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress("127.0.0.1", port));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  /** A port that was free a moment ago on 127.0.0.1. */
  public static int freePort() {
    try (ServerSocket socket = new ServerSocket()) {
      socket.setReuseAddress(true);
      socket.bind(new InetSocketAddress("127.0.0.1", 0));
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static Path resolveBinary() {
    String configured =
        System.getProperty("dlock.redis.server", System.getenv("DLOCK_REDIS_SERVER"));
    if (configured != null && !configured.isBlank() && !configured.equals("embedded")) {
      return Path.of(configured);
    }
    if (!"embedded".equals(configured)) {
      String path = System.getenv("PATH");
      if (path != null) {
        for (String dir : path.split(java.io.File.pathSeparator)) {
          Path candidate = Path.of(dir, "redis-server");
          if (Files.isExecutable(candidate)) {
            return candidate;
          }
        }
      }
    }
    return extractShippedBinary();
  }

  private static @Nullable Path extracted;

  private static synchronized Path extractShippedBinary() {
    // synchronized: a one-time file copy at test start, never around network I/O.
    if (extracted != null) {
      return extracted;
    }
    extracted = copyShippedBinary();
    return extracted;
  }

  private static Path copyShippedBinary() {
    String os = System.getProperty("os.name", "").toLowerCase(Locale.ROOT);
    String arch = System.getProperty("os.arch", "");
    if (!os.contains("linux") || !(arch.equals("amd64") || arch.equals("x86_64"))) {
      throw new IllegalStateException(
          "No redis-server on the PATH, and the shipped binary is for Linux x86-64 only (this is "
              + os
              + "/"
              + arch
              + "): install redis-server or set -Ddlock.redis.server=/path/to/redis-server");
    }
    try (InputStream in = RedisServerProcess.class.getResourceAsStream("/" + SHIPPED_BINARY)) {
      if (in == null) {
        throw new IllegalStateException(
            "No redis-server on the PATH and "
                + SHIPPED_BINARY
                + " not on the classpath"
                + " (it comes with org.signal:embedded-redis)");
      }
      Path file =
          Files.createTempFile(
              "dlock-redis-server-",
              "",
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
      // The copy replaced the file and its permissions: make it executable again.
      Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwx------"));
      file.toFile().deleteOnExit();
      return file;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
