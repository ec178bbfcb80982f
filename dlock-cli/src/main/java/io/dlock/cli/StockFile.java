package io.dlock.cli;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * The demo shop's stock: a number in a file that every buyer process reads and writes. Writes
 * replace the file atomically, so a reader always sees a whole number; what the file cannot do is
 * stop two buyers from reading the same number and both selling from it. That is the lock's job.
 */
final class StockFile {
  private final Path file;

  StockFile(Path file) {
    this.file = file;
  }

  long read() {
    try {
      return Long.parseLong(Files.readString(file, StandardCharsets.UTF_8).trim());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  void write(long stock) {
    try {
      Path temp =
          file.resolveSibling(
              file.getFileName() + "." + ThreadLocalRandom.current().nextLong(1L << 62));
      Files.writeString(temp, Long.toString(stock), StandardCharsets.UTF_8);
      Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * The articles' purchase: read the stock, check it, take a moment for the payment, write the
   * stock less one.
   *
   * @return false if sold out
   */
  boolean buyOne(Duration paymentTime) throws InterruptedException {
    long stock = read();
    if (stock < 1) {
      return false;
    }
    TimeUnit.NANOSECONDS.sleep(paymentTime.toNanos()); // the payment: the race window
    write(stock - 1);
    return true;
  }
}
