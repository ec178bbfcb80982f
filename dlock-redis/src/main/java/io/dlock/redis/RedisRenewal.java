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

/** The renewal of a batch of leases on one server (or Cluster), with {@code renew.lua}. */
final class RedisRenewal {
  /**
   * At most this many leases per renewal script: one script runs alone on its server, so an
   * unbounded batch would hold up every other client of it for as long as the batch takes.
   */
  static final int CHUNK = 50;

  private final ScriptCalls calls;
  private final RedisKeys keys;
  private final RedisScript renewScript;
  private final boolean cluster;
  private final BiFunction<String, Throwable, CompletionException> unavailable;

  RedisRenewal(
      ScriptCalls calls,
      RedisKeys keys,
      RedisScript renewScript,
      boolean cluster,
      BiFunction<String, Throwable, CompletionException> unavailable) {
    this.calls = calls;
    this.keys = keys;
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
      int slot = cluster ? SlotHash.getSlot(keys.lock(lease.lockName())) : 0;
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

  private CompletableFuture<Set<HeldLease>> renewInOneCall(List<HeldLease> leases) {
    String[] lockKeys = new String[leases.size()];
    String[] args = new String[leases.size() * 4];
    for (int i = 0; i < leases.size(); i++) {
      HeldLease lease = leases.get(i);
      lockKeys[i] = keys.lock(lease.lockName());
      args[4 * i] = lease.owner().key();
      args[4 * i + 1] = Long.toString(lease.fencingToken());
      args[4 * i + 2] = RedisLockBackend.leaseMillis(lease.lease());
      // An owner id's lease only grows here (renew.lua): other clients may hold the same id.
      args[4 * i + 3] = lease.owner().countsHolds() ? "1" : "0";
    }
    CompletableFuture<List<Object>> call = calls.run(renewScript, lockKeys, args);
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
