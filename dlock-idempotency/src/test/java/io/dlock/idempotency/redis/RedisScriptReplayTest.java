package io.dlock.idempotency.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.idempotency.IssuedToken;
import io.dlock.idempotency.Tokens;
import io.dlock.testkit.net.TcpProxy;
import io.dlock.testkit.server.RedisServerProcess;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The scripts under Lettuce's own replay: with Lettuce's default options, a command whose
 * connection closes before its answer is queued and sent again after the reconnect, and its caller
 * gets the second run's answer. The proxy lets the first run reach the server and closes the
 * connection instead of answering, so the server runs each script twice with the same arguments;
 * the caller must get the first run's outcome.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RedisScriptReplayTest {
  private static RedisServerProcess server;
  private static RedisIdempotency scripts;
  private TcpProxy proxy;
  private RedisClient client;
  private RedisCommands<String, String> resending;

  @BeforeAll
  static void startServer() {
    server = RedisServerProcess.start();
    scripts = RedisIdempotency.connect(server.uri());
  }

  @AfterAll
  static void stopServer() {
    if (scripts != null) {
      scripts.close();
    }
    if (server != null) {
      server.close();
    }
  }

  @BeforeEach
  void connectAClientThatResends() {
    proxy = new TcpProxy(new InetSocketAddress("127.0.0.1", server.port()));
    client = RedisClient.create(RedisURI.create("redis://127.0.0.1:" + proxy.port()));
    StatefulRedisConnection<String, String> connection = client.connect();
    resending = connection.sync();
  }

  @AfterEach
  void close() {
    if (client != null) {
      client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
    if (proxy != null) {
      proxy.close();
    }
  }

  @Test
  void aConsumeResentAfterAReconnectIsToldConsumed() {
    String retention = Long.toString(Duration.ofHours(1).toMillis());
    String request = Tokens.requestIdHash(UUID.randomUUID().toString());
    // Loads the script on the server: a NOSCRIPT answer lost would let it run only once.
    assertThat(
            scripts.consumeToken.<String>call(
                resending, "dlock:idem:token:" + Tokens.newToken(), retention, request))
        .isEqualTo("unknown");
    IssuedToken token = scripts.tokenStore().issue(Duration.ofMinutes(1));
    String key = "dlock:idem:token:" + Tokens.sha256Hex(token.value());

    proxy.dropNextReply(false);
    String answer = scripts.consumeToken.call(resending, key, retention, request);

    assertThat(proxy.droppedReplies()).as("replies lost").isEqualTo(1);
    assertThat(answer).isEqualTo("consumed");
    assertThat(scripts.tokenStore().consume(token.value()))
        .isEqualTo(io.dlock.idempotency.TokenConsumption.ALREADY_CONSUMED);
  }

  @Test
  void aClaimResentAfterAReconnectOwnsTheClaim() {
    String timeout = Long.toString(Duration.ofMinutes(1).toMillis());
    String owner = Tokens.newToken();
    List<Object> warmUp =
        scripts.claim.call(resending, "dlock:idem:dedup:" + UUID.randomUUID(), owner, "", timeout);
    assertThat(warmUp).containsExactly("claimed");
    String key = "dlock:idem:dedup:" + UUID.randomUUID();

    proxy.dropNextReply(false);
    List<Object> answer = scripts.claim.call(resending, key, owner, "", timeout);

    assertThat(proxy.droppedReplies()).as("replies lost").isEqualTo(1);
    assertThat(answer).containsExactly("claimed");
    assertThat(scripts.claim.<List<Object>>call(resending, key, Tokens.newToken(), "", timeout))
        .first()
        .isEqualTo("in-progress");
  }

  @Test
  void aCompletionResentAfterAReconnectIsToldDone() {
    String owner = Tokens.newToken();
    String key = "dlock:idem:dedup:" + UUID.randomUUID();
    String timeout = Long.toString(Duration.ofMinutes(1).toMillis());
    assertThat(scripts.claim.<List<Object>>call(resending, key, owner, "", timeout))
        .containsExactly("claimed");
    // Loads the finish script on the server: a NOSCRIPT answer lost would let it run only once.
    assertThat(scripts.finish.<Long>call(resending, key, Tokens.newToken(), "c", "", timeout))
        .isEqualTo(0L);

    proxy.dropNextReply(false);
    Long answer = scripts.finish.call(resending, key, owner, "c", "AQ==", timeout);

    assertThat(proxy.droppedReplies()).as("replies lost").isEqualTo(1);
    assertThat(answer).isEqualTo(1L);
  }
}
