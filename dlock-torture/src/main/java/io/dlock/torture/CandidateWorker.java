package io.dlock.torture;

import io.dlock.LeaderElection;
import io.dlock.LeaseState;
import io.dlock.LockClient;
import io.dlock.LockClients;
import io.dlock.LockOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

/**
 * A worker process of an election run: a candidate in one election ({@code
 * LockClient.election(...).join()}). While it leads (from {@code elected} to {@code revoked}, and
 * while its term's lease is valid) it works on the registers round after round as a lock worker
 * works inside a hold, its term's epoch the token: reads both, works 1 to 5 % of a lease, writes
 * both back plus one unless its term was revoked meanwhile. Told {@code uncertain}, it pauses until
 * {@code restored}; finding its lease invalid otherwise, it does no more work in that term. After a
 * term of an eighth to three quarters of a lease (half of them 1.5 leases in the partition
 * scenario) it resigns and joins again at once, so that terms change hands without a fault too.
 *
 * <p>Its history has the shape of a lock worker's (docs/safety.md), so that the same criteria judge
 * it: a term is a hold ({@code ELECTED} .. {@code REVOKED}, or the {@code INVALID}, {@code
 * RELEASING} or kill that comes first), competing is a wait ({@code ACQUIRING} .. {@code ELECTED}).
 *
 * <p>Arguments, each {@code --name=value}: {@code id}, {@code uri}, {@code prop} (repeatable),
 * {@code election} (its name), {@code lease-ms}, {@code hold-min-ms} and {@code hold-max-ms} (a
 * round of work), {@code term-min-ms} and {@code term-max-ms}, {@code long-hold-percent} and {@code
 * long-hold-ms} (that share of terms lasts that long instead), {@code registers}, {@code history},
 * {@code clock-offset-ms}. A {@code close} line on standard input closes its client at its next
 * round of work as leader (the {@code client-close} fault), after which it connects a new client
 * and stands again; the end of input ends the run: it closes its candidacy, waits for the notice of
 * its term's end, and records what its client still holds.
 */
public final class CandidateWorker {

  /** Why a term's work ended. */
  private enum End {
    REVOKED,
    INVALID,
    RESIGN,
    CLOSE,
    RUN_ENDS
  }

  private final String name;
  private final EventLog history;
  private final RegisterClient registers;
  private final CloseRequests closeRequests;
  private final CandidateNotices notices;
  private final Map<String, String> a;

  private CandidateWorker(
      Map<String, String> a,
      EventLog history,
      RegisterClient registers,
      CloseRequests closeRequests,
      CandidateNotices notices) {
    this.a = a;
    this.name = a.get("election");
    this.history = history;
    this.registers = registers;
    this.closeRequests = closeRequests;
    this.notices = notices;
  }

  public static void main(String[] args) throws Exception {
    Map<String, String> props = new HashMap<>();
    Map<String, String> a = Worker.parse(args, props);
    String id = a.get("id");
    EventLog history = new EventLog(Path.of(a.get("history")), id);
    history.append(Event.Kind.START, "-", 0, "pid " + ProcessHandle.current().pid());
    Supplier<LockClient> connect =
        () -> LockClients.connect(a.get("uri"), props, Worker.clientOptions(a));
    CandidateNotices notices = new CandidateNotices(history, a.get("election"));
    CloseRequests closeRequests = new CloseRequests();
    LockClient client = connect.get();
    try (RegisterClient registers = new RegisterClient(Integer.parseInt(a.get("registers")), id)) {
      Worker.watchInput(Thread.currentThread(), closeRequests);
      client =
          new CandidateWorker(a, history, registers, closeRequests, notices).stand(client, connect);
    } finally {
      client.close();
    }
    history.close();
    System.exit(0);
  }

  /** Stands until the run ends; returns the client it ends with (a close makes a new one). */
  private LockClient stand(LockClient first, Supplier<LockClient> connect) {
    LockOptions options =
        LockOptions.defaults()
            .withRenewedLease(Duration.ofMillis(Long.parseLong(a.get("lease-ms"))));
    LockClient client = first;
    LeaderElection election = join(client, options, "joins");
    long led = 0;
    while (!Thread.currentThread().isInterrupted()) {
      CandidateNotices.Term term;
      try {
        term = notices.awaitTerm(led);
      } catch (InterruptedException e) {
        break;
      }
      led = term.number();
      End end = lead(term);
      if (end == End.RUN_ENDS) {
        break;
      } else if (end == End.RESIGN) {
        history.append(Event.Kind.RELEASING, name, term.epoch(), "resigns");
        election.resign();
        // Its term's end is the notice's (RESIGNED, or a loss that came first): not waited for.
        election = join(client, options, "joins again");
      } else if (end == End.CLOSE) {
        closeWhileLeading(client, term);
        client = connect.get();
        history.append(Event.Kind.CLIENT_NEW, "-", 0, "");
        election = join(client, options, "joins with a new client");
      }
      // REVOKED, INVALID: the candidacy competes again by itself once it is told revoked
    }
    leave(election);
    Worker.recordWhatIsStillHeld(client, history);
    return client;
  }

  private LeaderElection join(LockClient client, LockOptions options, String why) {
    LeaderElection election = client.election(name, options, notices);
    history.append(Event.Kind.ACQUIRING, name, 0, why);
    election.join();
    return election;
  }

  /** Works as the leader of {@code term} until it ends or is to end; says why. */
  private End lead(CandidateNotices.Term term) {
    long number = term.number();
    long epoch = term.epoch();
    Duration lease = Duration.ofMillis(Long.parseLong(a.get("lease-ms")));
    ThreadLocalRandom random = ThreadLocalRandom.current();
    long termMillis =
        random.nextInt(100) < Integer.parseInt(a.getOrDefault("long-hold-percent", "0"))
            ? Long.parseLong(a.get("long-hold-ms"))
            : random.nextLong(
                Long.parseLong(a.get("term-min-ms")), Long.parseLong(a.get("term-max-ms")) + 1);
    long resignAt = System.nanoTime() + Duration.ofMillis(termMillis).toNanos();
    int holdMin = Integer.parseInt(a.get("hold-min-ms"));
    int holdMax = Integer.parseInt(a.get("hold-max-ms"));
    try {
      while (true) {
        if (Thread.currentThread().isInterrupted()) {
          return End.RUN_ENDS;
        }
        if (!notices.leads(number)) {
          return End.REVOKED;
        }
        if (!term.term().lease().isValid()) {
          if (term.term().lease().state() == LeaseState.UNCERTAIN) {
            // Told uncertain (or about to be): paused until restored, revoked, or run out.
            notices.awaitCertainty(number, lease.dividedBy(10));
            continue;
          }
          history.append(
              Event.Kind.INVALID, name, epoch, "lease found invalid: no more work in this term");
          return End.INVALID;
        }
        if (System.nanoTime() - resignAt >= 0) {
          return End.RESIGN;
        }
        int hold = holdMin + random.nextInt(holdMax - holdMin + 1);
        if (!Worker.criticalSection(
            registers, closeRequests, name, epoch, hold, () -> !notices.leads(number), history)) {
          return End.CLOSE;
        }
      }
    } catch (InterruptedException e) {
      return End.RUN_ENDS; // in the middle of a round: its writes are skipped
    }
  }

  /**
   * The client-close fault: closes the client under its term and waits for the term's notice
   * ({@code CLIENT_CLOSED}, told on the closing thread at the latest). The close goes through to
   * its end even if the run ends meanwhile (its interrupt is kept for after).
   */
  private void closeWhileLeading(LockClient client, CandidateNotices.Term term) {
    registers.closing(name); // the coordinator learns of it, as from a lock worker
    // The term ends as its leader gives it up: close() releases it.
    history.append(Event.Kind.RELEASING, name, term.epoch(), "by closing the client");
    history.append(Event.Kind.CLOSE_BEGIN, name, term.epoch(), "leading");
    client.close();
    history.append(Event.Kind.CLOSE_END, name, term.epoch(), "");
    notices.awaitRevoked(term.number(), Worker.OPERATION_TIMEOUT);
  }

  /**
   * The run's end: closes the candidacy (resigning a term it leads), and waits for that term's
   * notice, so that every term of a live candidate ends with one in the history.
   */
  private void leave(LeaderElection election) {
    Thread.interrupted(); // the run's end interrupted this thread; the waits below are bounded
    Optional<CandidateNotices.Term> leading = notices.current();
    if (leading.isEmpty()) {
      history.append(Event.Kind.NO_GRANT, name, 0, "interrupted: the run ends");
    }
    // Token 0 if it leads nothing now: a term told meanwhile is resigned by the close, asked for.
    history.append(
        Event.Kind.RELEASING,
        name,
        leading.map(CandidateNotices.Term::epoch).orElse(0L),
        "the run ends: closes its candidacy");
    election.close();
    leading.ifPresent(t -> notices.awaitRevoked(t.number(), Worker.OPERATION_TIMEOUT));
  }
}
