package io.dlock.cli;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs the command line through its own entry point ({@link Dlock#execute(InputStream, PrintWriter,
 * PrintWriter, String...)}) in this JVM, each run on a thread of its own, with its streams and exit
 * status captured: the same parsing, client, lock and child process as the packaged jar, without a
 * JVM start per call. Commands that {@code run} starts write to this JVM's own output, so tests
 * make them write to files.
 */
final class InProcessCli implements Cli {

  @Override
  public Result run(Duration timeout, String... args) {
    return runWithInput("", timeout, args);
  }

  @Override
  public Result runWithInput(String input, Duration timeout, String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    long start = System.nanoTime();
    InProcessRun run =
        new InProcessRun(
            new ByteArrayInputStream(input.getBytes(StandardCharsets.UTF_8)),
            new PrintWriter(out, true),
            new PrintWriter(err, true),
            args);
    int exit;
    try {
      exit = run.exit.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      run.stop();
      throw new AssertionError(
          "dlock " + String.join(" ", args) + " did not end within " + timeout);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      run.stop();
      throw new AssertionError(e);
    } catch (ExecutionException e) {
      throw new AssertionError("dlock " + String.join(" ", args) + " threw", e.getCause());
    }
    return new Result(
        exit, out.toString(), err.toString(), Duration.ofNanos(System.nanoTime() - start));
  }

  @Override
  public Running start(Path outFile, Path errFile, String... args) {
    try {
      return new InProcessRun(
          InputStream.nullInputStream(),
          new PrintWriter(Files.newBufferedWriter(outFile, StandardCharsets.UTF_8), true),
          new PrintWriter(Files.newBufferedWriter(errFile, StandardCharsets.UTF_8), true),
          args);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** One run on a thread of its own; its streams are closed when it ends. */
  private static final class InProcessRun implements Running {
    private final CompletableFuture<Integer> exit = new CompletableFuture<>();
    private final Thread thread;

    InProcessRun(InputStream in, PrintWriter out, PrintWriter err, String... args) {
      thread =
          new Thread(
              () -> {
                int status = -1;
                Throwable failed = null;
                try {
                  status = Dlock.execute(in, out, err, args);
                } catch (Throwable t) {
                  failed = t;
                } finally {
                  // Closed (and so flushed) before the end is told: the test reads them next.
                  out.close();
                  err.close();
                }
                if (failed == null) {
                  exit.complete(status);
                } else {
                  exit.completeExceptionally(failed);
                }
              },
              "dlock " + String.join(" ", args));
      thread.setDaemon(true);
      thread.start();
    }

    @Override
    public boolean waitFor(long timeout, TimeUnit unit) throws InterruptedException {
      try {
        exit.get(timeout, unit);
        return true;
      } catch (TimeoutException e) {
        return false;
      } catch (ExecutionException e) {
        return true;
      }
    }

    @Override
    public int exitValue() {
      return exit.join();
    }

    @Override
    public long pid() {
      return ProcessHandle.current().pid();
    }

    @Override
    public void stop() {
      thread.interrupt();
      try {
        // The command is stopped with SIGTERM and its grace period; the lock released after.
        thread.join(TimeUnit.MINUTES.toMillis(1));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      if (thread.isAlive()) {
        throw new AssertionError(thread.getName() + " did not end within a minute of its stop");
      }
    }
  }
}
