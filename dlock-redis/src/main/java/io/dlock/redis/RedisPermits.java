package io.dlock.redis;

import io.dlock.PermitInfo;
import io.dlock.redis.script.RedisScript;
import io.dlock.spi.AcquireResult;
import io.dlock.spi.HeldLease;
import io.dlock.spi.HolderDescription;
import io.dlock.spi.LockOwner;
import io.dlock.spi.PermitStore;
import io.dlock.spi.ReleaseListener;
import io.dlock.spi.ReleaseResult;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * The leased semaphores of a {@link RedisLockBackend} (single node, Sentinel or Cluster), one
 * script call per primitive (docs/redis.md, "Semaphores").
 *
 * <p>A semaphore {@code S} is two keys under {@code <prefix>permits{S}}, apart from every lock key
 * ({@code <prefix>{N}}): a sorted set of owner to lease end on the server's clock, and a hash of
 * owner to grant. Both carry the semaphore's hash tag, so they share one Cluster slot with its
 * request memories, its release channel and its fencing counter (one per slot, as for locks, and
 * like theirs never deleted: tokens keep growing after an idle semaphore's keys expired).
 */
final class RedisPermits implements PermitStore {
  private final RedisLockBackend backend;

  /** The lock key rules under a prefix of the semaphores' own: one rule for both namespaces. */
  private final RedisKeys keys;

  private final RedisClusterAsyncCommands<String, String> commands;
  private final String requestMemoryMillis;
  private final RedisScript acquireScript;
  private final RedisScript releaseScript;
  private final RedisScript undoAcquireScript;
  private final RedisScript holdersScript;
  private final RedisScript forceReleaseScript;
  private final List<RedisScript> scripts;
  private final RedisRenewal renewal;
  private final AtomicBoolean preloaded = new AtomicBoolean();

  RedisPermits(
      RedisLockBackend backend,
      String keyPrefix,
      RedisClusterAsyncCommands<String, String> commands,
      boolean cluster,
      String requestMemoryMillis) {
    this.backend = backend;
    this.keys = new RedisKeys(keyPrefix + "permits");
    this.commands = commands;
    this.requestMemoryMillis = requestMemoryMillis;
    this.acquireScript = load("permit-acquire.lua");
    this.releaseScript = load("permit-release.lua");
    this.undoAcquireScript = load("permit-undo-acquire.lua");
    this.holdersScript = load("permit-holders.lua");
    this.forceReleaseScript = load("permit-force-release.lua");
    RedisScript renewScript = load("permit-renew.lua");
    this.scripts =
        List.of(
            acquireScript,
            releaseScript,
            undoAcquireScript,
            holdersScript,
            forceReleaseScript,
            renewScript);
    this.renewal =
        new RedisRenewal(
            backend.calls(),
            new RedisRenewal.LeaseArguments() {
              @Override
              public String slotKey(HeldLease lease) {
                return leases(lease.lockName());
              }

              @Override
              public void add(HeldLease lease, List<String> leaseKeys, List<String> args) {
                leaseKeys.add(leases(lease.lockName()));
                leaseKeys.add(grants(lease.lockName()));
                args.add(lease.owner().key());
                args.add(Long.toString(lease.fencingToken()));
                args.add(RedisLockBackend.leaseMillis(lease.lease()));
              }
            },
            renewScript,
            cluster,
            backend::unavailable);
  }

  private RedisScript load(String resource) {
    return RedisScript.load(RedisPermits.class, resource, ScriptOutputType.MULTI, commands);
  }

  /**
   * Sends the scripts to the server's cache, once, before the first acquisition: a client that
   * never uses a semaphore (and Redlock's masters) pays nothing for them at start, which on Cluster
   * means a load on every node. The acquisition then finds its script (it follows on the
   * connection), and the scripts called after it find theirs.
   */
  private void preloadOnce() {
    if (!preloaded.get() && preloaded.compareAndSet(false, true)) {
      scripts.forEach(script -> script.preload(commands));
    }
  }

  private String leases(String semaphore) {
    return keys.lock(semaphore);
  }

  private String grants(String semaphore) {
    return keys.lock(semaphore) + ":grants";
  }

  @Override
  public CompletableFuture<AcquireResult> tryAcquire(
      String semaphore, int permits, int count, LockOwner owner, Duration lease) {
    preloadOnce();
    String request = RequestIds.next();
    long sent = backend.clock().nanoTime();
    CompletableFuture<List<Object>> call =
        backend
            .calls()
            .run(
                acquireScript,
                new String[] {
                  leases(semaphore),
                  grants(semaphore),
                  keys.fenceCounter(semaphore),
                  keys.request(semaphore, request)
                },
                owner.key(),
                Integer.toString(permits),
                Integer.toString(count),
                RedisLockBackend.leaseMillis(lease),
                request,
                Long.toString(System.currentTimeMillis()),
                HolderDescription.of(owner),
                requestMemoryMillis);
    return ScriptCalls.cancelling(
            call,
            call.handle(
                (reply, error) -> {
                  if (error != null) {
                    throw backend.unavailable("acquire permits of '" + semaphore + "'", error);
                  }
                  long value = (Long) reply.get(1);
                  if (((Long) reply.get(0)) == 1L) {
                    return (AcquireResult) new AcquireResult.Granted(value, 1);
                  }
                  return new AcquireResult.Held(value >= 0 ? Duration.ofMillis(value) : null);
                }))
        .whenComplete(
            (result, error) -> {
              if (error != null) {
                // Unanswered, perhaps granted: take it back, as a lock's (UnansweredAcquireUndo).
                UnansweredAcquireUndo.start(
                    semaphore,
                    lease,
                    sent,
                    backend.clock(),
                    backend::isClosed,
                    () -> undoAcquire(semaphore, owner, request));
              }
            })
        .thenCompose(
            result ->
                backend.acknowledgedByReplicas(
                    "permits of '" + semaphore + "'",
                    result,
                    token -> release(semaphore, owner, token)));
  }

  /** Takes back the grant of {@code owner} if acquire request {@code request} touched it last. */
  CompletableFuture<Boolean> undoAcquire(String semaphore, LockOwner owner, String request) {
    return undoAcquireScript
        .<List<Object>>callWithSourceAsync(
            commands,
            new String[] {leases(semaphore), grants(semaphore)},
            owner.key(),
            request,
            keys.releaseChannel(semaphore))
        .handle(
            (reply, error) -> {
              if (error != null) {
                throw backend.unavailable(
                    "undo an acquisition of permits of '" + semaphore + "'", error);
              }
              return ((Long) reply.get(0)) == 1L;
            });
  }

  @Override
  public CompletableFuture<ReleaseResult> release(
      String semaphore, LockOwner owner, long fencingToken) {
    String request = RequestIds.next();
    CompletableFuture<List<Object>> call =
        backend
            .calls()
            .run(
                releaseScript,
                new String[] {
                  leases(semaphore), grants(semaphore), keys.request(semaphore, request)
                },
                owner.key(),
                Long.toString(fencingToken),
                keys.releaseChannel(semaphore),
                requestMemoryMillis);
    return ScriptCalls.cancelling(
        call,
        call.handle(
            (reply, error) -> {
              if (error != null) {
                throw backend.unavailable("release permits of '" + semaphore + "'", error);
              }
              return ((Long) reply.get(0)) == 1L ? ReleaseResult.RELEASED : ReleaseResult.NOT_HELD;
            }));
  }

  /** One script call per Cluster slot and per {@link RedisRenewal#CHUNK} leases. */
  @Override
  public CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
    return renewal.renew(leases);
  }

  /** On the backend's signal connection, a channel per semaphore apart from lock channels. */
  @Override
  public CompletableFuture<Void> watchReleases(String semaphore, ReleaseListener listener) {
    return backend.watchChannel(
        keys.releaseChannel(semaphore), "releases of permits of '" + semaphore + "'", listener);
  }

  @Override
  public void unwatchReleases(String semaphore) {
    backend.unwatchChannel(keys.releaseChannel(semaphore));
  }

  @Override
  public CompletableFuture<List<PermitInfo>> holders(String semaphore) {
    return holdersScript
        .<List<Object>>callAsync(commands, new String[] {leases(semaphore), grants(semaphore)})
        .handle(
            (reply, error) -> {
              if (error != null) {
                throw backend.unavailable("list the permits of '" + semaphore + "'", error);
              }
              List<PermitInfo> infos = new ArrayList<>();
              for (int i = 0; i + 1 < reply.size(); i += 2) {
                PermitInfo info =
                    describe(semaphore, (String) reply.get(i), (Long) reply.get(i + 1));
                if (info != null) {
                  infos.add(info);
                }
              }
              infos.sort(Comparator.comparingLong(PermitInfo::fencingToken));
              return infos;
            });
  }

  @Override
  public CompletableFuture<Optional<PermitInfo>> forceRelease(String semaphore, long fencingToken) {
    return forceReleaseScript
        .<List<Object>>callAsync(
            commands,
            new String[] {leases(semaphore), grants(semaphore)},
            Long.toString(fencingToken),
            keys.releaseChannel(semaphore))
        .handle(
            (reply, error) -> {
              if (error != null) {
                throw backend.unavailable(
                    "force the release of permit " + fencingToken + " of '" + semaphore + "'",
                    error);
              }
              if (reply.isEmpty()) {
                return Optional.empty();
              }
              return Optional.ofNullable(
                  describe(semaphore, (String) reply.get(0), (Long) reply.get(1)));
            });
  }

  /**
   * A grant as stored ({@code <count>|<token>|<since>|<request>|<holder>}, see {@code
   * permit-acquire.lua}), or null if the value is not one of ours.
   */
  static @Nullable PermitInfo describe(String semaphore, String grant, long remainingMillis) {
    String[] parts = grant.split("\\|", 5);
    if (parts.length < 5) {
      return null;
    }
    try {
      return new PermitInfo(
          semaphore,
          parts[4],
          Long.parseLong(parts[1]),
          Integer.parseInt(parts[0]),
          parts[2].isEmpty() ? null : Instant.ofEpochMilli(Long.parseLong(parts[2])),
          Duration.ofMillis(Math.max(0, remainingMillis)));
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
