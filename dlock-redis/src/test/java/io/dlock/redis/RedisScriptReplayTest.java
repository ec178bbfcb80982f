package io.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.redis.script.RedisScript;
import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.async.RedisAsyncCommands;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Lettuce re-sends unacknowledged commands after a reconnect, so a script may run twice. The
 * scripts must then change nothing the second time: no extra hold, no double release.
 */
class RedisScriptReplayTest {
  private RedisClient client;
  private StatefulRedisConnection<String, String> connection;
  private RedisAsyncCommands<String, String> redis;
  private RedisScript acquire;
  private RedisScript release;
  private RedisScript undo;
  private final RedisKeys keys =
      new RedisKeys("replay-" + UUID.randomUUID() + ":"); // fresh counters: tokens from 1
  private final String name = "replay-" + UUID.randomUUID();

  @BeforeEach
  void connect() {
    client = RedisClient.create(RedisTestServers.embedded().uri());
    connection = client.connect();
    redis = connection.async();
    acquire =
        RedisScript.load(RedisLockBackend.class, "acquire.lua", ScriptOutputType.MULTI, redis);
    release =
        RedisScript.load(RedisLockBackend.class, "release.lua", ScriptOutputType.MULTI, redis);
    undo =
        RedisScript.load(RedisLockBackend.class, "undo-acquire.lua", ScriptOutputType.MULTI, redis);
  }

  @AfterEach
  void close() {
    connection.close();
    client.shutdown();
  }

  private List<Object> acquire(String owner, String request) throws Exception {
    return acquire
        .<List<Object>>callAsync(
            redis,
            new String[] {keys.lock(name), keys.fenceCounter(name), keys.request(name, request)},
            owner,
            "30000",
            request,
            "1700000000000",
            "test-host/1/main",
            "10000",
            owner.startsWith("o:") ? "1" : "0")
        .get(5, TimeUnit.SECONDS);
  }

  private long release(String owner, String request) throws Exception {
    return release(owner, request, 1L);
  }

  private long release(String owner, String request, long token) throws Exception {
    List<Object> reply =
        release
            .<List<Object>>callAsync(
                redis,
                new String[] {keys.lock(name), keys.request(name, request)},
                owner,
                keys.releaseChannel(name),
                request,
                Long.toString(token),
                "10000")
            .get(5, TimeUnit.SECONDS);
    return (Long) reply.get(0);
  }

  private long undo(String owner, String acquireRequest) throws Exception {
    List<Object> reply =
        undo.<List<Object>>callAsync(
                redis,
                new String[] {keys.lock(name)},
                owner,
                acquireRequest,
                keys.releaseChannel(name),
                "u-" + acquireRequest)
            .get(5, TimeUnit.SECONDS);
    return (Long) reply.get(0);
  }

  @Test
  void aReplayedGrantForAGrantTokenAddsNoHold() throws Exception {
    List<Object> first = acquire("t:grant", "r1");
    List<Object> replay = acquire("t:grant", "r1");
    assertThat(replay).isEqualTo(first);
    assertThat(acquire("t:grant", "r2").get(2)).as("no re-entry for a grant token").isEqualTo(1L);
    assertThat(release("t:grant", "r3")).as("one release frees it").isEqualTo(1L);
  }

  @Test
  void aReplayedOwnerIdAcquireOrReleaseCountsOnce() throws Exception {
    acquire("o:chain", "a1");
    assertThat(acquire("o:chain", "a2").get(2)).isEqualTo(2L);
    assertThat(acquire("o:chain", "a2").get(2)).as("replayed re-entry").isEqualTo(2L);
    assertThat(release("o:chain", "d1")).isEqualTo(2L);
    assertThat(release("o:chain", "d1")).as("replayed release keeps the last hold").isEqualTo(2L);
    assertThat(acquire("t:other", "x1").get(0)).as("still held").isEqualTo(0L);
    assertThat(release("o:chain", "d2")).isEqualTo(1L);
    assertThat(acquire("t:other", "x2").get(0)).isEqualTo(1L);
  }

  @Test
  void aFencingCounterThatIsNotANumberFailsWithoutTakingTheLock() throws Exception {
    redis.set(keys.fenceCounter(name), "not-a-number").get(5, TimeUnit.SECONDS);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> acquire("t:grant", "r1"))
        .hasMessageContaining("not an integer");
    assertThat(redis.exists(keys.lock(name)).get(5, TimeUnit.SECONDS)).isZero();
  }

  @Test
  void aReleaseNamingAnEarlierGrantOfTheSameOwnerIdChangesNothing() throws Exception {
    assertThat(acquire("o:chain", "a1").get(1)).isEqualTo(1L);
    redis.del(keys.lock(name)).get(5, TimeUnit.SECONDS); // the first grant ends on the server
    assertThat(acquire("o:chain", "a2").get(1)).as("a newer grant").isEqualTo(2L);
    assertThat(release("o:chain", "d1", 1L)).as("the first grant's late release").isZero();
    assertThat(acquire("t:other", "x1").get(0)).as("the newer grant still holds").isEqualTo(0L);
    assertThat(release("o:chain", "d2", 2L)).isEqualTo(1L);
  }

  @Test
  void anUndoTakesBackOnlyItsOwnRequestsHold() throws Exception {
    acquire("o:chain", "a1");
    acquire("o:chain", "a2");
    assertThat(undo("o:chain", "a1")).as("a1 is not the last request").isZero();
    assertThat(undo("o:chain", "a2")).as("a2's re-entry is taken back").isEqualTo(1L);
    assertThat(undo("o:chain", "a2")).as("and only once").isZero();
    assertThat(acquire("t:other", "x1").get(0)).as("a1's hold remains").isEqualTo(0L);
    assertThat(release("o:chain", "d1")).isEqualTo(1L);
    acquire("t:grant", "g1");
    assertThat(undo("t:grant", "g1")).isEqualTo(1L);
    assertThat(acquire("t:other", "x2").get(0)).as("the undone grant freed the lock").isEqualTo(1L);
  }

  /**
   * Hostile review of issue 14: owner id o:X holds twice (two processes); P1's release runs but its
   * answer is lost; P2 re-enters; Lettuce re-sends P1's release. The re-sent release must change
   * nothing, or P2's release of one hold would then delete the lock under P2's other hold.
   */
  @Test
  void aReleaseResentAfterAnotherHoldChangedTheLockChangesNothing() throws Exception {
    acquire("o:X", "p1-a");
    acquire("o:X", "p2-a");
    assertThat(release("o:X", "p1-r")).isEqualTo(2L);
    assertThat(acquire("o:X", "p2-b").get(2)).as("P2 re-enters").isEqualTo(2L);
    assertThat(release("o:X", "p1-r")).as("the re-sent release answers as it did").isEqualTo(2L);
    assertThat(release("o:X", "p2-r1")).isEqualTo(2L);
    assertThat(acquire("t:stranger", "s1").get(0))
        .as("P2's last hold still excludes")
        .isEqualTo(0L);
    assertThat(release("o:X", "p2-r2")).isEqualTo(1L);
  }

  /** A re-sent release of the last hold answers "released" again, not "not held". */
  @Test
  void aReleaseOfTheLastHoldResentAfterTheDeletionStillAnswersReleased() throws Exception {
    acquire("t:grant", "g1");
    assertThat(release("t:grant", "r1")).isEqualTo(1L);
    assertThat(release("t:grant", "r1")).isEqualTo(1L);
  }

  /** An acquire re-sent after a release in between adds no phantom hold. */
  @Test
  void anAcquireResentAfterAReleaseInBetweenAddsNoHold() throws Exception {
    acquire("o:X", "a1");
    acquire("o:X", "a2");
    assertThat(release("o:X", "r1")).isEqualTo(2L);
    assertThat(acquire("o:X", "a2").get(2)).as("a2 re-sent: its first answer").isEqualTo(2L);
    assertThat(release("o:X", "r2")).as("one hold was left, and this was it").isEqualTo(1L);
    assertThat(acquire("t:stranger", "s1").get(0)).isEqualTo(1L);
  }

  /**
   * Redlock: a raise of the stored token that arrives late, from an earlier grant of the same owner
   * id, must not lower a newer grant's token (its release and renewal would then miss this master).
   */
  @Test
  void aLateRaiseOfTheFencingTokenNeverLowersIt() throws Exception {
    RedisScript raise =
        RedisScript.load(RedisLockBackend.class, "raise-fence.lua", ScriptOutputType.MULTI, redis);
    acquire("o:X", "a1");
    List<Object> newer =
        raise
            .<List<Object>>callAsync(
                redis, new String[] {keys.lock(name), keys.fenceCounter(name)}, "o:X", "7")
            .get(5, TimeUnit.SECONDS);
    assertThat(newer.get(0)).isEqualTo(1L);
    List<Object> late =
        raise
            .<List<Object>>callAsync(
                redis, new String[] {keys.lock(name), keys.fenceCounter(name)}, "o:X", "3")
            .get(5, TimeUnit.SECONDS);
    assertThat(late.get(0)).as("not this grant's token").isEqualTo(0L);
    assertThat(release("o:X", "r1", 7L)).as("the newer grant keeps token 7").isEqualTo(1L);
  }
}
