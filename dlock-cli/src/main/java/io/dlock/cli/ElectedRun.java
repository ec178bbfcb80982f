package io.dlock.cli;

import io.dlock.BackendUnavailableException;
import io.dlock.LeaderElection;
import io.dlock.LeaderTerm;
import io.dlock.LeadershipListener;
import io.dlock.LeadershipListener.Revocation;
import io.dlock.LockClient;
import io.dlock.LockEventListener;
import io.dlock.LockOptions;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * {@code dlock run --elect NAME}: the command runs while this process leads the election {@code
 * NAME}, for one term at most. A standby competes until it is elected (or {@code --wait} ends); the
 * end of its term (the lock taken, the lease expired, the session lost) stops the command as a lost
 * lock does and exits 76, so that a supervisor starts a fresh candidate, as {@code consul lock}
 * exits when its lock is lost; a command that ends by itself resigns, and dlock exits with its
 * status. A suspended connection (ZooKeeper, a database session) only warns: the suspension ends,
 * at the latest when the lease runs out unrenewed, as a restored session or a lost term, which
 * stops the command.
 *
 * <p>Everything the run waits for (the election's notices, whether an attempt found another leader,
 * the command's end) comes through one queue, so the calling thread alone starts and stops the
 * command, releases the term and closes the candidacy, in the order things happened.
 */
final class ElectedRun {

  /** What the calling thread waits for. */
  private sealed interface Notice {}

  private record Elected(LeaderTerm term) implements Notice {}

  private record Uncertain(LeaderTerm term) implements Notice {}

  private record Restored(LeaderTerm term) implements Notice {}

  private record Revoked(LeaderTerm term, Revocation reason, String detail) implements Notice {}

  /** An attempt found the election's lock held: another candidate leads. */
  private record OtherLeads() implements Notice {}

  /** An attempt got no answer from the backend (the candidacy tries again a second later). */
  private record Unanswered() implements Notice {}

  private record CommandEnded() implements Notice {}

  private final String election;
  private final List<String> command;
  private final Duration killAfter;
  private final PrintWriter err;
  private final RunShutdown shutdown;
  private final BlockingQueue<Notice> notices = new LinkedBlockingQueue<>();
  private boolean interrupted;

  ElectedRun(
      String election,
      List<String> command,
      Duration killAfter,
      PrintWriter err,
      RunShutdown shutdown) {
    this.election = election;
    this.command = command;
    this.killAfter = killAfter;
    this.err = err;
    this.shutdown = shutdown;
  }

  /**
   * The listener of the client's lock events that tells this run how the candidacy's attempts end:
   * an attempt that finds the lock held starts to wait, which is how a {@code --wait} that has run
   * out learns that another candidate leads (the candidacy itself only tells of terms).
   */
  LockEventListener attempts() {
    return new LockEventListener() {
      @Override
      public void waiting(String lockName) {
        if (lockName.equals(election)) {
          notices.add(new OtherLeads());
        }
      }

      @Override
      public void notAcquired(String lockName, AcquireFailure failure, Duration latency) {
        if (lockName.equals(election) && failure == AcquireFailure.BACKEND_UNAVAILABLE) {
          notices.add(new Unanswered());
        }
      }
    };
  }

  /** Whether the calling thread was interrupted (run in process): its caller sets it again. */
  boolean interrupted() {
    return interrupted;
  }

  /**
   * Competes, runs the command for the term it gets, and returns dlock's exit status. The candidacy
   * is closed before it returns (resigning a term it still holds), and the shutdown hook told that
   * the election's lock is given back.
   *
   * @param wait what the connection left of {@code --wait}; null: no limit
   * @param attemptBound how long an attempt under way when the wait ends may still take to say
   *     whether it got the lock: {@code --wait 0} makes one attempt, as it does for a lock
   * @param waitText how the message names the wait
   */
  int run(
      LockClient client,
      LockOptions options,
      @Nullable Duration wait,
      Duration attemptBound,
      int conflictExitCode,
      String waitText) {
    LeaderElection candidacy = client.election(election, options, listener());
    try {
      candidacy.join();
      AwaitedTerm awaited;
      try {
        awaited = awaitTerm(wait, attemptBound);
      } catch (InterruptedException e) {
        interrupted = true; // stopped while a standby: nothing to stop, the close resigns
        return ExitCodes.INTERRUPTED;
      }
      if (awaited.term() == null) {
        if (awaited.unanswered()) {
          throw new BackendUnavailableException(
              "not elected in '"
                  + election
                  + "' within "
                  + waitText
                  + ": the backend did not answer the candidacy's attempts");
        }
        err.println("dlock: not elected in '" + election + "' within " + waitText);
        err.flush();
        return conflictExitCode;
      }
      return lead(candidacy, awaited.term());
    } finally {
      candidacy.close(); // resigns a term still held, and competes no more
      shutdown.released();
    }
  }

  /** The term the wait got, or none; and whether the backend left attempts unanswered. */
  private record AwaitedTerm(@Nullable LeaderTerm term, boolean unanswered) {}

  private AwaitedTerm awaitTerm(@Nullable Duration wait, Duration attemptBound)
      throws InterruptedException {
    long start = System.nanoTime();
    boolean otherLeads = false;
    boolean unanswered = false;
    while (true) {
      Notice notice;
      if (wait == null) {
        notice = notices.take();
      } else {
        // Past the wait, an attempt under way may still get the term: until an attempt finds
        // another leader, or for the bound of one attempt.
        long left =
            wait.toNanos()
                + (otherLeads ? 0 : attemptBound.toNanos())
                - (System.nanoTime() - start);
        if (left <= 0) {
          return new AwaitedTerm(null, unanswered && !otherLeads);
        }
        notice = notices.poll(left, TimeUnit.NANOSECONDS);
        if (notice == null) {
          continue;
        }
      }
      if (notice instanceof Elected elected) {
        return new AwaitedTerm(elected.term(), false);
      }
      otherLeads |= notice instanceof OtherLeads;
      unanswered |= notice instanceof Unanswered;
    }
  }

  private int lead(LeaderElection candidacy, LeaderTerm term) {
    String epoch = Long.toString(term.epoch());
    ProcessBuilder builder = new ProcessBuilder(command).inheritIO();
    Map<String, String> env = builder.environment();
    env.put("DLOCK_ELECTION", election);
    env.put("DLOCK_EPOCH", epoch);
    // A command written for `dlock run --name` finds what it knows: the epoch is the fencing token
    // of the election's lock.
    env.put("DLOCK_NAME", election);
    env.put("DLOCK_FENCING_TOKEN", epoch);
    Process child;
    try {
      child = shutdown.start(builder);
    } catch (IOException e) {
      err.println("dlock: cannot run '" + command.get(0) + "': " + e.getMessage());
      err.flush();
      return ExitCodes.COMMAND_NOT_FOUND; // the close resigns
    }
    if (child == null) { // dlock is being stopped: the command is not started
      clearInterrupt();
      return ExitCodes.INTERRUPTED;
    }
    child.onExit().thenRun(() -> notices.add(new CommandEnded()));
    try {
      while (true) {
        Notice notice = notices.take();
        if (notice instanceof CommandEnded) {
          return ended(term, child.exitValue());
        } else if (notice instanceof Revoked revoked && revoked.term() == term) {
          // First, so that this candidate competes no more (a candidacy whose term is lost
          // competes again at once): the next term belongs to another process.
          candidacy.close();
          return revoked(revoked, child);
        } else if (notice instanceof Uncertain uncertain && uncertain.term() == term) {
          say(
              "warning: the connection to the backend is suspended: the term of election '"
                  + election
                  + "' (epoch "
                  + epoch
                  + ") may end unheard; the command goes on, and is stopped if the term is"
                  + " lost");
        } else if (notice instanceof Restored restored && restored.term() == term) {
          say(
              "the connection is back with the same session: the term of election '"
                  + election
                  + "' (epoch "
                  + epoch
                  + ") stands");
        }
      }
    } catch (InterruptedException e) {
      // Run inside another program's thread, which stopped it: as for a signal to dlock itself.
      interrupted = true;
      RunCommand.stop(child, killAfter);
      return release(term) ? ExitCodes.INTERRUPTED : ExitCodes.LEASE_LOST;
    }
  }

  /** The command ended by itself while leading: resign, and pass on its status. */
  private int ended(LeaderTerm term, int status) {
    if (release(term)) {
      return status;
    }
    // Lost while the command ran and found only now (a command shorter than a renewal).
    foundAfterTheEnd(term, "the release found the term already over");
    return ExitCodes.LEASE_LOST;
  }

  private int revoked(Revoked revoked, Process child) {
    String why =
        revoked.reason().name().toLowerCase(Locale.ROOT).replace('_', ' ')
            + ": "
            + revoked.detail();
    if (!child.isAlive()) {
      foundAfterTheEnd(revoked.term(), why);
      return ExitCodes.LEASE_LOST;
    }
    say(
        "the term of election '"
            + election
            + "' (epoch "
            + revoked.term().epoch()
            + ") ended ("
            + why
            + "); stopping the command");
    RunCommand.stop(child, killAfter);
    return ExitCodes.LEASE_LOST;
  }

  private void foundAfterTheEnd(LeaderTerm term, String why) {
    say(
        "the term of election '"
            + election
            + "' (epoch "
            + term.epoch()
            + ") was lost ("
            + why
            + "), found after the command ended: it may have run without leading for some of its"
            + " time");
  }

  /**
   * Gives the term's lock back, here rather than by the candidacy's close, since only the release
   * says whether the term still stood. Whether it did; a release the backend did not answer is
   * reported, and counted as held (the lock expires within its lease).
   */
  private boolean release(LeaderTerm term) {
    try {
      return term.lease().release();
    } catch (BackendUnavailableException e) {
      say("warning: " + e.getMessage());
      return true;
    }
  }

  private void say(String message) {
    err.println("dlock: " + message);
    err.flush();
  }

  private void clearInterrupt() {
    if (Thread.interrupted()) {
      interrupted = true;
    }
  }

  private LeadershipListener listener() {
    return new LeadershipListener() {
      @Override
      public void elected(LeaderTerm term) {
        notices.add(new Elected(term));
      }

      @Override
      public void uncertain(LeaderTerm term) {
        notices.add(new Uncertain(term));
      }

      @Override
      public void restored(LeaderTerm term) {
        notices.add(new Restored(term));
      }

      @Override
      public void revoked(LeaderTerm term, Revocation reason, String detail) {
        notices.add(new Revoked(term, reason, detail));
      }
    };
  }
}
