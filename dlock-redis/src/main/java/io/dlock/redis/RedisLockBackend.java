package io.dlock.redis;

import io.dlock.BackendUnavailableException;
import io.dlock.LockInfo;
import io.dlock.MonotonicClock;
import io.dlock.redis.script.RedisScript;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.BackendContext;
import io.dlock.spi.Failures;
import io.dlock.spi.HeldLease;
import io.dlock.spi.HolderDescription;
import io.dlock.spi.LockAdministration;
import io.dlock.spi.LockBackend;
import io.dlock.spi.LockOwner;
import io.dlock.spi.PermitStore;
import io.dlock.spi.ReleaseListener;
import io.dlock.spi.ReleaseResult;
import io.dlock.spi.ReleaseSignals;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Redis {@link LockBackend}: one multiplexed Lettuce connection for commands and one for
 * release signals. Every primitive is one script call, so one round trip.
 */
public final class RedisLockBackend implements LockBackend, ReleaseSignals, LockAdministration {
  private static final Logger log = LoggerFactory.getLogger(RedisLockBackend.class);

  private final RedisLockSettings settings;
  private final RedisKeys keys;
  private final java.util.concurrent.atomic.AtomicBoolean closed =
      new java.util.concurrent.atomic.AtomicBoolean();
  private final RedisConnections connections;
  private final RedisClusterAsyncCommands<String, String> commands;
  private final Map<String, ReleaseListener> releaseListeners = new ConcurrentHashMap<>();
  private final RedisScript acquireScript;
  private final RedisScript releaseScript;
  private final RedisScript renewScript;
  private final RedisScript forceReleaseScript;
  private final RedisScript raiseFenceScript;
  private final RedisScript undoAcquireScript;
  private final ScriptCalls calls;
  private final RedisRenewal renewal;
  private final RedisPermits permits;

  /**
   * How long a script remembers a request it ran: Lettuce re-sends a command only while it waits
   * for its answer (at most the command timeout), so twice that, plus a second, outlives every
   * re-send.
   */
  private final String requestMemoryMillis;

  /** The client's clock, from {@link #start}; the system clock until then. */
  private volatile MonotonicClock clock = MonotonicClock.SYSTEM;

  /** The client's call bound, from {@link #start}: {@link #close} waits no longer. */
  private volatile Duration operationTimeout = Duration.ofSeconds(5);

  private RedisLockBackend(RedisLockSettings settings) {
    this.settings = settings;
    this.keys = new RedisKeys(settings.keyPrefix());
    this.requestMemoryMillis =
        Long.toString(settings.commandTimeout().multipliedBy(2).plusSeconds(1).toMillis());
    this.connections = RedisConnections.open(settings);
    this.commands = connections.commands;
    connections.signals.addListener(
        new RedisPubSubAdapter<>() {
          @Override
          public void message(String channel, String message) {
            ReleaseListener listener = releaseListeners.get(channel);
            if (listener != null) {
              listener.released(null);
            }
          }
        });
    this.acquireScript =
        RedisScript.load(RedisLockBackend.class, "acquire.lua", ScriptOutputType.MULTI, commands);
    this.releaseScript =
        RedisScript.load(RedisLockBackend.class, "release.lua", ScriptOutputType.MULTI, commands);
    this.renewScript =
        RedisScript.load(RedisLockBackend.class, "renew.lua", ScriptOutputType.MULTI, commands);
    this.forceReleaseScript =
        RedisScript.load(
            RedisLockBackend.class, "force-release.lua", ScriptOutputType.MULTI, commands);
    this.raiseFenceScript =
        RedisScript.load(
            RedisLockBackend.class, "raise-fence.lua", ScriptOutputType.MULTI, commands);
    this.undoAcquireScript =
        RedisScript.load(
            RedisLockBackend.class, "undo-acquire.lua", ScriptOutputType.MULTI, commands);
    this.calls = new ScriptCalls(commands);
    this.renewal =
        new RedisRenewal(calls, keys, renewScript, connections.cluster, this::unavailable);
    // Every script into the server's cache now: their first calls then cost no NOSCRIPT round
    // trip (a load and a second call) each; Redlock's raise-fence call has only a node timeout.
    for (RedisScript script :
        List.of(
            acquireScript,
            releaseScript,
            renewScript,
            forceReleaseScript,
            raiseFenceScript,
            undoAcquireScript)) {
      script.preload(commands);
    }
    this.permits =
        new RedisPermits(
            this, settings.keyPrefix(), commands, connections.cluster, requestMemoryMillis);
  }

  /**
   * Connects to Redis.
   *
   * @throws BackendUnavailableException if the server cannot be reached within the command timeout
   * @throws IllegalArgumentException if the URI is malformed
   */
  public static RedisLockBackend connect(RedisLockSettings settings) {
    return new RedisLockBackend(settings);
  }

  RedisKeys keys() {
    return keys;
  }

  @Override
  public String name() {
    return "redis";
  }

  @Override
  public void start(BackendContext context) {
    clock = context.clock();
    operationTimeout = context.operationTimeout();
  }

  @Override
  public Optional<ReleaseSignals> releaseSignals() {
    return Optional.of(this);
  }

  @Override
  public Optional<LockAdministration> administration() {
    return Optional.of(this);
  }

  /** Leased semaphores: {@link RedisPermits}. */
  @Override
  public Optional<PermitStore> permits() {
    return Optional.of(permits);
  }

  @Override
  public CompletableFuture<AcquireResult> tryAcquire(
      String lockName, LockOwner owner, Duration lease) {
    String request = RequestIds.next();
    long sent = clock.nanoTime();
    return acquire(lockName, owner, lease, request)
        .whenComplete(
            (result, error) -> {
              if (error != null) {
                UnansweredAcquireUndo.start(
                    lockName,
                    lease,
                    sent,
                    clock,
                    closed::get,
                    () -> undoAcquire(lockName, owner, request));
              }
            })
        .thenCompose(
            result ->
                acknowledgedByReplicas(
                    "'" + lockName + "'", result, token -> release(lockName, owner, token)));
  }

  /**
   * One acquire script call with the given request id; the caller takes back a grant whose answer
   * it does not get ({@link #undoAcquire}).
   */
  CompletableFuture<AcquireResult> acquire(
      String lockName, LockOwner owner, Duration lease, String request) {
    CompletableFuture<List<Object>> call =
        run(
            acquireScript,
            new String[] {
              keys.lock(lockName), keys.fenceCounter(lockName), keys.request(lockName, request)
            },
            owner.key(),
            leaseMillis(lease),
            request,
            Long.toString(System.currentTimeMillis()),
            HolderDescription.of(owner),
            requestMemoryMillis,
            owner.countsHolds() ? "1" : "0");
    return cancelling(
        call,
        call.handle(
            (reply, error) -> {
              if (error != null) {
                throw unavailable("acquire '" + lockName + "'", error);
              }
              if (((Long) reply.get(0)) == 1L) {
                return (AcquireResult)
                    new AcquireResult.Granted(
                        (Long) reply.get(1), ((Long) reply.get(2)).intValue());
              }
              long pttl = (Long) reply.get(1);
              return new AcquireResult.Held(pttl >= 0 ? Duration.ofMillis(pttl) : null);
            }));
  }

  /**
   * Takes back the hold that acquire request {@code request} added, if that request was the last to
   * change the lock (see {@code undo-acquire.lua}).
   *
   * @return true if a hold was taken back
   */
  CompletableFuture<Boolean> undoAcquire(String lockName, LockOwner owner, String request) {
    return undoAcquireScript
        .<List<Object>>callWithSourceAsync(
            commands,
            new String[] {keys.lock(lockName)},
            owner.key(),
            request,
            keys.releaseChannel(lockName),
            RequestIds.next())
        .handle(
            (reply, error) -> {
              if (error != null) {
                throw unavailable("undo an acquisition of '" + lockName + "'", error);
              }
              return ((Long) reply.get(0)) == 1L;
            });
  }

  /**
   * With {@link RedisLockSettings#withReplicaAcknowledgement}, waits for the replicas to
   * acknowledge a grant; a grant they did not acknowledge in time is released and fails.
   */
  CompletableFuture<AcquireResult> acknowledgedByReplicas(
      String what, AcquireResult result, LongFunction<CompletableFuture<?>> release) {
    int replicas = settings.replicasToAcknowledge();
    if (replicas == 0 || !(result instanceof AcquireResult.Granted)) {
      return CompletableFuture.completedFuture(result);
    }
    return commands
        .waitForReplication(replicas, settings.replicaTimeout().toMillis())
        .toCompletableFuture()
        .handle((acked, error) -> error == null ? acked : Long.valueOf(-1))
        .thenCompose(
            acked -> {
              if (acked >= replicas) {
                return CompletableFuture.completedFuture(result);
              }
              return release
                  .apply(((AcquireResult.Granted) result).fencingToken())
                  .handle(
                      (released, error) -> {
                        throw new CompletionException(
                            new BackendUnavailableException(
                                "Only "
                                    + Math.max(acked, 0)
                                    + " of "
                                    + replicas
                                    + " replica(s) acknowledged the grant of "
                                    + what
                                    + " within "
                                    + settings.replicaTimeout()
                                    + "; it was released"));
                      });
            });
  }

  @Override
  public CompletableFuture<ReleaseResult> release(
      String lockName, LockOwner owner, long fencingToken) {
    String request = RequestIds.next();
    CompletableFuture<List<Object>> call =
        run(
            releaseScript,
            new String[] {keys.lock(lockName), keys.request(lockName, request)},
            owner.key(),
            keys.releaseChannel(lockName),
            request,
            Long.toString(fencingToken),
            requestMemoryMillis);
    return cancelling(
        call,
        call.handle(
            (reply, error) -> {
              if (error != null) {
                throw unavailable("release '" + lockName + "'", error);
              }
              long code = (Long) reply.get(0);
              return code == 1L
                  ? ReleaseResult.RELEASED
                  : code == 2L ? ReleaseResult.STILL_HELD : ReleaseResult.NOT_HELD;
            }));
  }

  /**
   * Redlock: raises this node's fencing counter to at least {@code token} and stores the token in
   * the owner's lock.
   *
   * @return true if {@code owner} still holds the lock on this node
   */
  CompletableFuture<Boolean> raiseFence(String lockName, LockOwner owner, long token) {
    CompletableFuture<List<Object>> call =
        run(
            raiseFenceScript,
            new String[] {keys.lock(lockName), keys.fenceCounter(lockName)},
            owner.key(),
            Long.toString(token));
    return cancelling(
        call,
        call.handle(
            (reply, error) -> {
              if (error != null) {
                throw unavailable("raise the fencing counter of '" + lockName + "'", error);
              }
              return ((Long) reply.get(0)) == 1L;
            }));
  }

  /** See {@link RedisRenewal#renew}. */
  @Override
  public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
    return renewal.renew(leases);
  }

  @Override
  public CompletableFuture<Void> watchReleases(String lockName, ReleaseListener onRelease) {
    return watchChannel(keys.releaseChannel(lockName), "releases of '" + lockName + "'", onRelease);
  }

  @Override
  public void unwatchReleases(String lockName) {
    unwatchChannel(keys.releaseChannel(lockName));
  }

  /** Subscribes to a release channel (a lock's or a semaphore's); {@code what} names it. */
  CompletableFuture<Void> watchChannel(String channel, String what, ReleaseListener onRelease) {
    releaseListeners.put(channel, onRelease);
    return connections
        .signals
        .async()
        .subscribe(channel)
        .toCompletableFuture()
        .handle(
            (ok, error) -> {
              if (error != null) {
                throw unavailable("subscribe to " + what, error);
              }
              return null;
            });
  }

  void unwatchChannel(String channel) {
    releaseListeners.remove(channel);
    connections.signals.async().unsubscribe(channel);
  }

  @Override
  public CompletableFuture<List<LockInfo>> inspect(String namePattern) {
    return RedisLockListing.list(commands, keys, namePattern)
        .handle(
            (infos, error) -> {
              if (error != null) {
                throw unavailable("list locks matching '" + namePattern + "'", error);
              }
              return infos;
            });
  }

  @Override
  public CompletableFuture<Optional<LockInfo>> forceRelease(String lockName) {
    return forceReleaseScript
        .<List<Object>>callAsync(
            commands, new String[] {keys.lock(lockName)}, keys.releaseChannel(lockName))
        .handle(
            (reply, error) -> {
              if (error != null) {
                throw unavailable("force the release of '" + lockName + "'", error);
              }
              if (reply.isEmpty()) {
                return Optional.empty();
              }
              return Optional.ofNullable(
                  RedisLockValue.describe(lockName, (String) reply.get(0), (Long) reply.get(1)));
            });
  }

  /** Closes within the client's operation timeout (see {@link #close(Duration)}). */
  @Override
  public void close() {
    close(operationTimeout);
  }

  /**
   * Closes the connections and the client, waiting at most {@code bound}, and says whether they
   * were done by then or are still closing in the background.
   */
  RedisConnections.Closed close(Duration bound) {
    closed.set(true);
    return connections.close(bound);
  }

  ScriptCalls calls() {
    return calls;
  }

  /** The client's clock, once started. */
  MonotonicClock clock() {
    return clock;
  }

  boolean isClosed() {
    return closed.get();
  }

  /** Script calls whose answer is still awaited (neither answered nor cancelled). */
  int callsInFlight() {
    return calls.inFlight();
  }

  private <T> CompletableFuture<T> run(RedisScript script, String[] keys, String... args) {
    return calls.run(script, keys, args);
  }

  private static <T> CompletableFuture<T> cancelling(
      CompletableFuture<?> source, CompletableFuture<T> derived) {
    return ScriptCalls.cancelling(source, derived);
  }

  /** Whole milliseconds, rounded up: the server must never hold a lease shorter than asked. */
  static String leaseMillis(Duration lease) {
    return Long.toString((lease.toNanos() + 999_999L) / 1_000_000L);
  }

  CompletionException unavailable(String operation, Throwable error) {
    Throwable cause = Failures.unwrap(error);
    if (cause instanceof RedisCommandExecutionException) {
      // The server answered with an error: a bug or a misconfiguration, not an outage; say which.
      log.error("Redis refused '{}': {}", operation, cause.getMessage());
    }
    return new CompletionException(
        new BackendUnavailableException(
            "Redis at "
                + settings.redactedUri()
                + " did not complete '"
                + operation
                + "': "
                + Failures.describe(cause),
            cause));
  }
}
