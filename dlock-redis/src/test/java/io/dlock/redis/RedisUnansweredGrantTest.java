package io.dlock.redis;

import static io.dlock.testkit.TestTiming.millis;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockOptions;
import io.dlock.Permit;
import io.dlock.testkit.net.TcpProxy;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Issue 14, item 7: a grant the server made but whose answer came after the command timeout. The
 * caller is told the backend is unavailable; the lock must not stay taken by nobody for the whole
 * lease.
 */
class RedisUnansweredGrantTest {
  private TcpProxy slowPath;
  private LockClient slow;
  private LockClient direct;
  private final String name = "unanswered-" + UUID.randomUUID();

  @BeforeEach
  void start() {
    var server = RedisTestServers.embedded();
    slowPath = new TcpProxy(new InetSocketAddress("127.0.0.1", server.port()));
    slow =
        LockClients.create(
            RedisLockBackend.connect(
                RedisLockSettings.of("redis://127.0.0.1:" + slowPath.port())
                    .withCommandTimeout(millis(300))),
            LockClientOptions.defaults().withOperationTimeout(millis(5000)));
    direct =
        LockClients.create(
            RedisLockBackend.connect(RedisLockSettings.of(server.uri())),
            LockClientOptions.defaults());
  }

  @AfterEach
  void stop() {
    slow.close();
    direct.close();
    slowPath.close();
  }

  @Test
  void aGrantAnsweredAfterTheCommandTimeoutIsTakenBack() {
    LockOptions day = LockOptions.defaults().withFixedLease(Duration.ofDays(1));
    // One round trip first, so that the server has the scripts cached and the delayed acquire
    // below runs at once when it arrives (a NOSCRIPT retry would come after the timeout).
    Lease first = slow.lock(name, day).tryAcquire().orElseThrow();
    String next = "\r\n" + (first.fencingToken() + 1) + "\r\n"; // the counter after the next grant
    assertThat(first.release()).isTrue();
    // Every byte now takes 600 ms each way: the acquire reaches the server after the client's
    // 300 ms command timeout, and the server grants it.
    slowPath.delay(millis(600).toMillis());
    assertThatThrownBy(() -> slow.lock(name, day).tryAcquire())
        .isInstanceOf(BackendUnavailableException.class);
    // The fencing counter (never deleted) shows when the delayed grant has been made: it draws the
    // token after the first grant's.
    RedisKeys keys = new RedisKeys(RedisLockSettings.DEFAULT_KEY_PREFIX);
    await()
        .atMost(millis(10_000))
        .until(
            () ->
                RedisTestServers.embedded().command("GET", keys.fenceCounter(name)).endsWith(next));
    // The grant is made on the server, then taken back by the undo that follows it.
    await()
        .atMost(millis(10_000))
        .untilAsserted(() -> assertThat(direct.lock(name).tryAcquire()).isPresent());
  }

  /** As {@link #aGrantAnsweredAfterTheCommandTimeoutIsTakenBack}, for permits. */
  @Test
  void aPermitGrantAnsweredAfterTheCommandTimeoutIsTakenBack() {
    LockOptions day = LockOptions.defaults().withFixedLease(Duration.ofDays(1));
    Permit first = slow.semaphore(name, 1, day).tryAcquire().orElseThrow();
    String next = "\r\n" + (first.fencingToken() + 1) + "\r\n";
    assertThat(first.release()).isTrue();
    slowPath.delay(millis(600).toMillis());
    assertThatThrownBy(() -> slow.semaphore(name, 1, day).tryAcquire())
        .isInstanceOf(BackendUnavailableException.class);
    RedisKeys keys = new RedisKeys(RedisLockSettings.DEFAULT_KEY_PREFIX + "permits");
    await()
        .atMost(millis(10_000))
        .until(
            () ->
                RedisTestServers.embedded().command("GET", keys.fenceCounter(name)).endsWith(next));
    await()
        .atMost(millis(10_000))
        .untilAsserted(() -> assertThat(direct.semaphore(name, 1).tryAcquire()).isPresent());
  }

  /**
   * Hostile review of issue 14: the acquire reaches the server, then the path goes silent and
   * swallows the undo that was written after it; the connection is reset later. An undo whose
   * answer never came must be sent again once the connection is back, or the grant stays for its
   * whole lease (a day here).
   */
  @Test
  void anUndoSwallowedByASilentConnectionIsSentAgainAfterTheReconnect() throws Exception {
    slow.close();
    slow =
        LockClients.create(
            RedisLockBackend.connect(
                RedisLockSettings.of("redis://127.0.0.1:" + slowPath.port())
                    .withCommandTimeout(millis(1000))),
            LockClientOptions.defaults().withOperationTimeout(millis(5000)));
    LockOptions day = LockOptions.defaults().withFixedLease(Duration.ofDays(1));
    Lease first = slow.lock(name, day).tryAcquire().orElseThrow();
    String next = "\r\n" + (first.fencingToken() + 1) + "\r\n"; // the counter after the next grant
    assertThat(first.release()).isTrue();
    // The acquire arrives 2 s after it is sent; the client gives up after 1 s and sends the undo,
    // which would arrive 1 s after the grant.
    slowPath.delay(millis(2000).toMillis());
    assertThatThrownBy(() -> slow.lock(name, day).tryAcquire())
        .isInstanceOf(BackendUnavailableException.class);
    RedisKeys keys = new RedisKeys(RedisLockSettings.DEFAULT_KEY_PREFIX);
    await()
        .pollInterval(Duration.ofMillis(10))
        .atMost(millis(10_000))
        .until(
            () ->
                RedisTestServers.embedded().command("GET", keys.fenceCounter(name)).endsWith(next));
    slowPath.cut(); // the undo (and every repeat of it) is swallowed from now on
    assertThat(RedisTestServers.embedded().command("EXISTS", keys.lock(name)))
        .as("the grant was made and not yet undone")
        .startsWith(":1");
    // The fault itself: the path stays silent past the undo's 1 s command timeout, so that the
    // client library has given the undo up and will not re-send it after the reconnect.
    TimeUnit.MILLISECONDS.sleep(millis(1500).toMillis());
    slowPath.delay(0);
    slowPath.heal(); // resets the silent connection: what it held is gone
    await()
        .atMost(millis(15_000))
        .untilAsserted(() -> assertThat(direct.lock(name).tryAcquire()).isPresent());
  }
}
