package io.dlock.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs the packaged {@code dlock.jar} as separate OS processes, as a user would. */
final class CliProcesses implements Cli {
  private final Path jar = Path.of(System.getProperty("dlock.cli.jar", "target/dlock.jar"));
  private final Path archive;

  CliProcesses(Path workDir, String trainingBackend) {
    if (!Files.isRegularFile(jar)) {
      throw new IllegalStateException("No " + jar + ": run the tests with `./mvnw verify`");
    }
    // One training run records the loaded classes; later runs start about twice as fast.
    archive = workDir.resolve("dlock.jsa");
    Result training =
        run(
            List.of("-XX:ArchiveClassesAtExit=" + archive),
            List.of("status", "--backend", trainingBackend),
            Duration.ofSeconds(60));
    if (training.exit() != 0) {
      throw new IllegalStateException("training run failed: " + training);
    }
  }

  List<String> command(List<String> jvmOptions, List<String> args) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(
        List.of(
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            "-Xlog:cds=off",
            "-Xlog:cds+dynamic=off"));
    if (jvmOptions.isEmpty() && archive != null && Files.isRegularFile(archive)) {
      command.add("-XX:SharedArchiveFile=" + archive);
    }
    command.addAll(jvmOptions);
    command.add("-jar");
    command.add(jar.toString());
    command.addAll(args);
    return command;
  }

  @Override
  public Running start(Path outFile, Path errFile, String... args) {
    try {
      Process process =
          new ProcessBuilder(command(List.of(), List.of(args)))
              .redirectOutput(outFile.toFile())
              .redirectError(errFile.toFile())
              .redirectInput(ProcessBuilder.Redirect.PIPE)
              .start();
      return new Running() {
        @Override
        public boolean waitFor(long timeout, TimeUnit unit) throws InterruptedException {
          return process.waitFor(timeout, unit);
        }

        @Override
        public int exitValue() {
          return process.exitValue();
        }

        @Override
        public long pid() {
          return process.pid();
        }

        @Override
        public void stop() {
          process.destroy();
          try {
            if (!process.waitFor(1, TimeUnit.MINUTES)) {
              process.destroyForcibly();
            }
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            process.destroyForcibly();
          }
        }
      };
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public Result run(Duration timeout, String... args) {
    return run(List.of(), List.of(args), timeout);
  }

  @Override
  public Result runWithInput(String input, Duration timeout, String... args) {
    return run(List.of(), List.of(args), timeout, input);
  }

  private Result run(List<String> jvmOptions, List<String> args, Duration timeout) {
    return run(jvmOptions, args, timeout, "");
  }

  private Result run(List<String> jvmOptions, List<String> args, Duration timeout, String input) {
    try {
      Path out = Files.createTempFile("dlock-out-", ".txt");
      Path err = Files.createTempFile("dlock-err-", ".txt");
      long start = System.nanoTime();
      Process process =
          new ProcessBuilder(command(jvmOptions, args))
              .redirectOutput(out.toFile())
              .redirectError(err.toFile())
              .start();
      process.getOutputStream().write(input.getBytes(StandardCharsets.UTF_8));
      process.getOutputStream().close();
      if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
        process.destroyForcibly();
        throw new AssertionError("dlock " + args + " did not finish within " + timeout);
      }
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      Result result =
          new Result(process.exitValue(), Files.readString(out), Files.readString(err), took);
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
      return result;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
