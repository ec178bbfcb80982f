package io.dlock.torture;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * An append-only history file. Every event is one {@code write(2)} of one line, unbuffered: once
 * {@link #append} returns, the line is in the kernel's page cache and survives a SIGKILL of this
 * process, which is exactly the moment the history matters most. A plain stream, not a {@code
 * FileChannel}: an interrupt (how a worker's run ends) would close a channel under the writer.
 */
final class EventLog implements AutoCloseable {
  private final FileOutputStream out;
  private final String source;
  private final ReentrantLock lock = new ReentrantLock();

  EventLog(Path file, String source) {
    this.source = source;
    try {
      this.out = new FileOutputStream(file.toFile(), true);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot open the history " + file, e);
    }
  }

  /** Records an event now. */
  Event append(Event.Kind kind, String lockName, long token, String detail) {
    return append(System.nanoTime(), kind, lockName, token, detail);
  }

  /** Records an event that happened at {@code nanos}. */
  Event append(long nanos, Event.Kind kind, String lockName, long token, String detail) {
    Event event = new Event(nanos, source, kind, lockName, token, Event.clean(detail));
    byte[] line = (event.format() + "\n").getBytes(StandardCharsets.UTF_8);
    lock.lock();
    try {
      out.write(line);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the history", e);
    } finally {
      lock.unlock();
    }
    return event;
  }

  @Override
  public void close() {
    try {
      out.close();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Every event of the history files in {@code dir}. A process killed in the middle of a write
   * leaves at most a partial last line, which is skipped.
   */
  static List<Event> readAll(Path dir) {
    List<Event> events = new ArrayList<>();
    try (var files = Files.list(dir)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".history")).toList()) {
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
          if (line.isEmpty()) {
            continue;
          }
          try {
            events.add(Event.parse(line));
          } catch (IllegalArgumentException e) {
            // a line cut short by SIGKILL
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the histories in " + dir, e);
    }
    events.sort(
        java.util.Comparator.comparingLong(Event::nanos).thenComparing(e -> e.kind().ordinal()));
    return events;
  }
}
