package io.dlock.redis;

import io.dlock.redis.script.RedisScript;
import io.dlock.spi.HeldLease;
import io.lettuce.core.cluster.SlotHash;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.BiFunction;

/**
 * The renewal of a batch of leases on one server (or Cluster) with one script: {@code renew.lua}
 * for locks, {@code permit-renew.lua} for permits ({@link RedisPermits}).
 */
final class RedisRenewal {
  /** How a lease goes into a renewal script: its keys, all in one Cluster slot, and arguments. */
  interface LeaseArguments {
    /** A key of the lease, whose Cluster slot its renewal goes to. */
    String slotKey(HeldLease lease);

    /** Appends the lease's keys and arguments, in the script's order. */
    void add(HeldLease lease, List<String> keys, List<String> args);
  }

  /**
   * At most this many leases per renewal script: one script runs alone on its server, so an
   * unbounded batch would hold up every other client of it for as long as the batch takes.
   */
  static final int CHUNK = 50;

  private final ScriptCalls calls;
  private final LeaseArguments arguments;
  private final RedisScript renewScript;
  private final boolean cluster;
  private final BiFunction<String, Throwable, CompletionException> unavailable;

  RedisRenewal(
      ScriptCalls calls,
      RedisKeys keys,
      RedisScript renewScript,
      boolean cluster,
      BiFunction<String, Throwable, CompletionException> unavailable) {
    this(calls, lockArguments(keys), renewScript, cluster, unavailable);
  }

  RedisRenewal(
      ScriptCalls calls,
      LeaseArguments arguments,
      RedisScript renewScript,
      boolean cluster,
      BiFunction<String, Throwable, CompletionException> unavailable) {
    this.calls = calls;
    this.arguments = arguments;
    this.renewScript = renewScript;
    this.cluster = cluster;
    this.unavailable = unavailable;
  }

  /**
   * One script call per Cluster slot (a script may only touch keys of one slot) and per {@link
   * #CHUNK} leases, all in flight at once. Completing the returned future first (a caller's
   * timeout) cancels the calls still in flight.
   */
  CompletableFuture<Set<HeldLease>> renew(List<HeldLease> leases) {
    Map<Integer, List<HeldLease>> bySlot = new HashMap<>();
    for (HeldLease lease : leases) {
      int slot = cluster ? SlotHash.getSlot(arguments.slotKey(lease)) : 0;
      bySlot.computeIfAbsent(slot, s -> new ArrayList<>()).add(lease);
    }
    List<CompletableFuture<Set<HeldLease>>> pending = new ArrayList<>();
    for (List<HeldLease> group : bySlot.values()) {
      for (int from = 0; from < group.size(); from += CHUNK) {
        pending.add(renewInOneCall(group.subList(from, Math.min(group.size(), from + CHUNK))));
      }
    }
    CompletableFuture<Set<HeldLease>> all =
        CompletableFuture.allOf(pending.toArray(new CompletableFuture<?>[0]))
            .thenApply(
                done -> {
                  Set<HeldLease> gone = new HashSet<>();
                  pending.forEach(call -> gone.addAll(call.join()));
                  return gone;
                });
    all.whenComplete(
        (gone, error) ->
            pending.forEach(
                call -> {
                  if (!call.isDone()) {
                    call.cancel(false);
                  }
                }));
    return all;
  }

  /** The number of script calls {@link #renew} makes for {@code leases} leases on one server. */
  static int renewalCalls(int leases) {
    return Math.max(1, (leases + CHUNK - 1) / CHUNK);
  }

  /** The arguments of {@code renew.lua}. */
  private static LeaseArguments lockArguments(RedisKeys keys) {
    return new LeaseArguments() {
      @Override
      public String slotKey(HeldLease lease) {
        return keys.lock(lease.lockName());
      }

      @Override
      public void add(HeldLease lease, List<String> lockKeys, List<String> args) {
        lockKeys.add(keys.lock(lease.lockName()));
        args.add(lease.owner().key());
        args.add(Long.toString(lease.fencingToken()));
        args.add(RedisLockBackend.leaseMillis(lease.lease()));
        // An owner id's lease only grows here (renew.lua): other clients may hold the same id.
        args.add(lease.owner().countsHolds() ? "1" : "0");
      }
    };
  }

  private CompletableFuture<Set<HeldLease>> renewInOneCall(List<HeldLease> leases) {
    List<String> keys = new ArrayList<>();
    List<String> args = new ArrayList<>();
    for (HeldLease lease : leases) {
      arguments.add(lease, keys, args);
    }
    CompletableFuture<List<Object>> call =
        calls.run(renewScript, keys.toArray(new String[0]), args.toArray(new String[0]));
    return ScriptCalls.cancelling(
        call,
        call.handle(
            (reply, error) -> {
              if (error != null) {
                throw unavailable.apply("renew " + leases.size() + " lease(s)", error);
              }
              Set<HeldLease> gone = new HashSet<>();
              for (Object position : reply) {
                gone.add(leases.get(((Long) position).intValue() - 1));
              }
              return gone;
            }));
  }
}
