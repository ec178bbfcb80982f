package io.dlock.torture;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code dlock-torture}: runs every scenario against every backend for as long as asked and writes
 * a Markdown report. Exit status 0 if every pass criterion held, 1 if one failed.
 */
@Command(
    name = "dlock-torture",
    mixinStandardHelpOptions = true,
    description = {
      "Fault-injection soak: worker processes contend for locks while holders are killed, paused,"
          + " cut off or delayed, the backend restarts and clocks are offset; a checker reads the"
          + " history and applies the pass criteria of docs/safety.md."
    })
public final class Torture implements Callable<Integer> {

  /** Every target a soak runs when none are named. */
  static final String DEFAULT_TARGETS =
      "redis,zookeeper,zookeeper-netns,postgres,redis-owner-id,zookeeper-owner-id,postgres-owner-id,"
          + "postgres-session,postgres-row,mariadb,mariadb-session,mariadb-row,mysql,mysql-session,"
          + "mysql-row,redlock,"
          + "idempotency-redis,idempotency-postgres";

  @Option(
      names = {"--targets", "--backends"},
      split = ",",
      defaultValue = DEFAULT_TARGETS,
      description =
          "Targets (backends and their modes), comma-separated (default: ${DEFAULT-VALUE}). A"
              + " backend name alone is its default mode; zookeeper-netns runs each member in a network"
              + " namespace of its own, to cut members off from each other (needs root; skipped"
              + " without); <backend>-owner-id shares owner ids"
              + " between worker processes (redis, redlock, zookeeper, postgres);"
              + " postgres-session, postgres-row, mariadb[-session|-row] and mysql[-session|-row] (the"
              + " MySQL dialect on that MariaDB) are dlock-jdbc's modes"
              + " (mariadb: the server named by DLOCK_TEST_MYSQL_URL, skipped without it); redlock"
              + " is 5 masters, one blackholed; idempotency-redis and idempotency-postgres run"
              + " dlock-idempotency's tokens and dedup claims under dropped replies. Also"
              + " redis-volatile (the"
              + " negative control: no persistence), redis-leaky-cancel and redis-abandon-at-close"
              + " (the negative controls of the async-cancel workload and of client-close), redis-external and postgres-external (the"
              + " servers named by DLOCK_TEST_REDIS_URI and DLOCK_TEST_POSTGRES_URL; not"
              + " restarted).")
  List<String> backends;

  @Option(
      names = "--scenarios",
      split = ",",
      description =
          "Scenarios, comma-separated; each target runs those that apply to it (default: each"
              + " target's own: calm, kill, pause, short-pause, restart, partition, delay,"
              + " clock-offset, waiter-partition, client-close for a backend's default mode;"
              + " force-release, partition, kill,"
              + " pause for owner ids; member-partition for zookeeper-netns).")
  List<String> scenarios;

  @Option(
      names = "--workload",
      split = ",",
      defaultValue = "lock",
      description =
          "What the workers do, comma-separated: lock (contend for --locks locks; the default),"
              + " election (stand as candidates in one election; the leader writes the registers"
              + " with its epoch), semaphore (take permits of one semaphore of 2 or 3, one or two"
              + " at a time, writing the register with the permit's token). Each target runs each"
              + " workload that applies to it (an election and a permit take no owner id: not on"
              + " *-owner-id, idempotency or the lock workload's negative controls; a semaphore"
              + " only where the backend has semaphores); an election runs the target's scenarios"
              + " but waiter-partition, a semaphore also but client-close, and both force-release"
              + " on every target with the classic faults.")
  List<String> workloads;

  @Option(
      names = "--time-per-backend",
      defaultValue = "PT10M",
      converter = DurationConverter.class,
      description =
          "Contention time per target, split evenly between its workloads' scenarios (e.g. 10m,"
              + " 90s; default 10m).")
  Duration timePerBackend;

  @Option(
      names = "--lease",
      defaultValue = "PT2S",
      converter = DurationConverter.class,
      description = "Lease of every grant, renewed every third (500ms..1m; default 2s).")
  Duration lease;

  @Option(
      names = "--workers",
      defaultValue = "4",
      description = "Worker processes (2..16; default 4).")
  int workers;

  @Option(
      names = "--locks",
      defaultValue = "2",
      description = "Lock names they share (1..100; default 2).")
  int locks;

  @Option(
      names = "--dir",
      defaultValue = "target/torture",
      description = "Where histories and worker logs go (default: ${DEFAULT-VALUE}).")
  Path dir;

  @Option(names = "--report", description = "Write the Markdown report here as well.")
  Path report;

  public static void main(String[] args) {
    int status = new CommandLine(new Torture()).execute(args);
    System.exit(status);
  }

  @Override
  public Integer call() throws Exception {
    List<Scenario> chosen =
        scenarios == null ? null : scenarios.stream().map(Scenario::of).toList();
    List<Workload> chosenWorkloads = workloads.stream().map(Workload::of).distinct().toList();
    List<RunResult> results =
        runAll(
            backends,
            chosenWorkloads,
            chosen,
            timePerBackend,
            workers,
            locks,
            lease,
            dir,
            System.err::println);
    String markdown =
        report(
            results,
            "Each target: "
                + timePerBackend.toSeconds()
                + " s of contention, split evenly between its workloads' scenarios.",
            commandLine());
    System.out.print(markdown);
    if (report != null) {
      Files.writeString(report, markdown);
    }
    return results.stream().allMatch(RunResult::passed) ? 0 : 1;
  }

  /**
   * Every target, each with the named workloads and scenarios that apply to it (the scenarios of
   * each workload its own when {@code scenarios} is null), {@code perTarget} split evenly between
   * its runs; each target's servers started once and shared by its runs.
   */
  static List<RunResult> runAll(
      List<String> backends,
      List<Workload> workloads,
      List<Scenario> scenarios,
      Duration perTarget,
      int workers,
      int locks,
      Duration lease,
      Path dir,
      java.util.function.Consumer<String> progress)
      throws InterruptedException {
    String jar = classpath();
    List<RunResult> results = new ArrayList<>();
    for (String backend : backends) {
      java.util.Optional<String> unavailable = Target.unavailableReason(backend);
      if (unavailable.isPresent()) {
        progress.accept("dlock-torture: " + backend + " skipped: " + unavailable.get());
        continue;
      }
      progress.accept("dlock-torture: starting " + backend);
      try (Target target = Target.start(backend)) {
        List<Map.Entry<Workload, Scenario>> runs = new ArrayList<>();
        for (Workload workload : workloads) {
          String unsupported = workload.unsupportedOn(target);
          if (unsupported != null) {
            progress.accept(
                "dlock-torture: no "
                    + workload.id()
                    + " workload on "
                    + backend
                    + ": "
                    + unsupported);
            continue;
          }
          List<Scenario> mine =
              scenarios == null
                  ? workload.defaultScenarios(target)
                  : scenarios.stream().filter(s -> applies(s, target, workload)).toList();
          if (mine.contains(Scenario.RESTART) && !target.restartable()) {
            progress.accept("dlock-torture: " + backend + " is not restarted (external server)");
            mine = mine.stream().filter(s -> s != Scenario.RESTART).toList();
          }
          mine.forEach(s -> runs.add(Map.entry(workload, s)));
        }
        if (runs.isEmpty()) {
          progress.accept("dlock-torture: no chosen scenario applies to " + backend);
          continue;
        }
        Duration perRun = perTarget.dividedBy(runs.size());
        for (Map.Entry<Workload, Scenario> run : runs) {
          RunSettings settings =
              new RunSettings(
                  backend,
                  run.getValue(),
                  perRun,
                  workers,
                  locks,
                  lease,
                  dir,
                  target.sharedOwnerIds(),
                  run.getKey());
          RunResult result =
              target.ledger()
                  ? new IdempotencyRun(settings, (IdempotencyTarget) target).run()
                  : new TortureRun(settings, target, jar).run();
          progress.accept("dlock-torture: " + result.tableRow());
          if (!result.serverClock().isEmpty()) {
            progress.accept("dlock-torture: " + result.serverClock());
          }
          results.add(result);
        }
      }
    }
    return results;
  }

  /** The class path of the processes a run starts (workers, servers): this jar's, or the tests'. */
  static String classpath() {
    return System.getProperty("dlock.torture.jar", System.getProperty("java.class.path"));
  }

  /**
   * Scenarios that need a mode run only on targets in that mode, and only with a workload they mean
   * something to.
   */
  static boolean applies(Scenario scenario, Target target, Workload workload) {
    if (target.ledger()) {
      return scenario == Scenario.DROPPED_REPLIES;
    }
    if (!workload.applies(scenario)) {
      return false;
    }
    return switch (scenario) {
        // An election's term deleted under its leader needs no owner id: TAKEN_OVER, then a new
        // leader, as docs/election.md says.
      case FORCE_RELEASE -> target.sharedOwnerIds() || workload == Workload.ELECTION;
      case DROPPED_REPLIES -> false;
      case MEMBER_PARTITION -> target.membersPartitionable();
        // Owner ids share grants across clients: a close ends one client's count of a grant that
        // lives on; the scenario measures a client's own grants.
      case CLIENT_CLOSE -> !target.sharedOwnerIds();
      default -> true;
    };
  }

  static String report(List<RunResult> results, String timing, String command) {
    StringBuilder md = new StringBuilder();
    md.append("Command: `").append(command).append("`  \n");
    md.append("Finished: ")
        .append(OffsetDateTime.now().truncatedTo(ChronoUnit.SECONDS))
        .append(" on ")
        .append(hostDescription())
        .append("  \n");
    md.append(timing).append("\n\n");
    List<RunResult> lockRuns = results.stream().filter(r -> r.ledger() == null).toList();
    List<RunResult> ledgerRuns = results.stream().filter(r -> r.ledger() != null).toList();
    if (!lockRuns.isEmpty()) {
      md.append(RunResult.tableHeader());
      lockRuns.forEach(r -> md.append(r.tableRow()).append('\n'));
      md.append('\n');
    }
    if (!ledgerRuns.isEmpty()) {
      md.append(Ledger.tableHeader());
      ledgerRuns.forEach(r -> md.append(r.tableRow()).append('\n'));
      md.append('\n');
    }
    List<RunResult> clocked = results.stream().filter(r -> !r.serverClock().isEmpty()).toList();
    if (!clocked.isEmpty()) {
      md.append("The servers' clocks (ServerClockSampler), run by run:\n\n");
      clocked.forEach(
          r ->
              md.append("- ")
                  .append(r.label())
                  .append(", ")
                  .append(r.scenario().id())
                  .append(": ")
                  .append(r.serverClock())
                  .append('\n'));
      md.append('\n');
    }
    md.append(
        "| target | runs | time (s) | grants (requests) | faults injected (replies dropped)"
            + " | failed runs |\n");
    md.append("|---|---:|---:|---:|---:|---:|\n");
    results.stream()
        .map(RunResult::label)
        .distinct()
        .forEach(
            b -> {
              List<RunResult> mine = results.stream().filter(r -> r.label().equals(b)).toList();
              md.append("| ")
                  .append(b)
                  .append(" | ")
                  .append(mine.size())
                  .append(" | ")
                  .append(mine.stream().mapToLong(r -> r.duration().toSeconds()).sum())
                  .append(" | ")
                  .append(mine.stream().mapToInt(RunResult::grants).sum())
                  .append(" | ")
                  .append(mine.stream().mapToInt(RunResult::faults).sum())
                  .append(" | ")
                  .append(mine.stream().filter(r -> !r.passed()).count())
                  .append(" |\n");
            });
    return md.toString();
  }

  private String commandLine() {
    return "./torture --targets="
        + String.join(",", backends)
        + (workloads.equals(List.of("lock")) ? "" : " --workload=" + String.join(",", workloads))
        + (scenarios == null ? "" : " --scenarios=" + String.join(",", scenarios))
        + " --time-per-backend="
        + DurationConverter.format(timePerBackend)
        + " --lease="
        + DurationConverter.format(lease)
        + " --workers="
        + workers
        + " --locks="
        + locks;
  }

  private static String hostDescription() {
    try {
      return Runtime.getRuntime().availableProcessors()
          + " cores, Java "
          + Runtime.version()
          + ", "
          + InetAddress.getLocalHost().getHostName();
    } catch (IOException e) {
      return Runtime.getRuntime().availableProcessors() + " cores, Java " + Runtime.version();
    }
  }

  /** 10m, 90s, 500ms, or ISO-8601 (PT10M). */
  static final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      String v = value.trim().toLowerCase(java.util.Locale.ROOT);
      try {
        if (v.startsWith("pt")) {
          return Duration.parse(value.toUpperCase(java.util.Locale.ROOT));
        }
        if (v.endsWith("ms")) {
          return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
        }
        long n = Long.parseLong(v.substring(0, v.length() - 1));
        return switch (v.charAt(v.length() - 1)) {
          case 's' -> Duration.ofSeconds(n);
          case 'm' -> Duration.ofMinutes(n);
          case 'h' -> Duration.ofHours(n);
          default -> throw new NumberFormatException();
        };
      } catch (RuntimeException e) {
        throw new CommandLine.TypeConversionException(
            "'" + value + "' is not a duration: write 500ms, 90s, 10m, 1h or PT10M");
      }
    }

    static String format(Duration d) {
      if (d.toMillis() % 60_000 == 0) {
        return d.toMinutes() + "m";
      }
      if (d.toMillis() % 1000 == 0) {
        return d.toSeconds() + "s";
      }
      return d.toMillis() + "ms";
    }
  }
}
