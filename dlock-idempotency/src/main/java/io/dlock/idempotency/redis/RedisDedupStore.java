package io.dlock.idempotency.redis;

import io.dlock.idempotency.ClaimAttempt;
import io.dlock.idempotency.ClaimOwner;
import io.dlock.idempotency.DedupStore;
import java.time.Duration;
import java.util.Base64;
import java.util.List;

/**
 * Dedup records on Redis: one hash per key ({@code prefix dedup: key}) with its state, owner,
 * fingerprint and result, claimed by a Lua script that creates it only when it is absent or failed
 * (the atomic {@code SET NX}), with the in-progress timeout as its TTL; completing it sets the
 * retention as its TTL. A crashed owner's record vanishes by the server's TTL. The owner is kept as
 * its request and attempt; a confirmation is the claim script in its confirm mode.
 */
final class RedisDedupStore implements DedupStore {
  private final RedisIdempotency redis;
  private final String prefix;

  RedisDedupStore(RedisIdempotency redis) {
    this.redis = redis;
    this.prefix = redis.settings().keyPrefix() + "dedup:";
  }

  @Override
  public ClaimAttempt tryClaim(
      String key, String fingerprint, String owner, Duration inProgressTimeout) {
    ClaimOwner claimant = ClaimOwner.parse(owner);
    List<Object> answer =
        redis.call(
            claimant.confirmation() ? "confirm a dedup claim" : "claim a dedup record",
            () ->
                redis.claim.call(
                    redis.redis(),
                    prefix + key,
                    claimant.request(),
                    fingerprint,
                    Long.toString(inProgressTimeout.toMillis()),
                    claimant.attempt(),
                    claimant.confirmation() ? "confirm" : "claim"));
    String kind = (String) answer.get(0);
    switch (kind) {
      case "claimed":
        return ClaimAttempt.claimed();
      case "mismatch":
        return ClaimAttempt.fingerprintMismatch();
      case "in-progress":
        return ClaimAttempt.inProgress(Duration.ofMillis(Math.max(0, (Long) answer.get(1))));
      case "completed":
        Object result = answer.get(1);
        return ClaimAttempt.completed(
            result == null ? new byte[0] : Base64.getDecoder().decode((String) result));
      default:
        throw new IllegalStateException("Unexpected answer of the claim script: " + kind);
    }
  }

  @Override
  public boolean complete(String key, String owner, byte[] result, Duration retention) {
    return finish(key, owner, "c", Base64.getEncoder().encodeToString(result), retention);
  }

  @Override
  public boolean fail(String key, String owner, Duration retention) {
    return finish(key, owner, "f", "", retention);
  }

  private boolean finish(
      String key, String owner, String state, String result, Duration retention) {
    ClaimOwner finisher = ClaimOwner.parse(owner);
    Long done =
        redis.call(
            "finish a dedup record",
            () ->
                redis.finish.call(
                    redis.redis(),
                    prefix + key,
                    finisher.request(),
                    state,
                    result,
                    Long.toString(retention.toMillis()),
                    finisher.attempt()));
    return done != null && done == 1L;
  }
}
