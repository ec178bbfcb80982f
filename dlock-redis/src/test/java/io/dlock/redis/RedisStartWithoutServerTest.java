package io.dlock.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.dlock.BackendUnavailableException;
import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.testkit.server.RedisServerProcess;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Issue 30, items 4 and 9 on a real server: {@link LockClients#connect} says which server it locks
 * on (without the password) and reports a server that is down as {@link
 * BackendUnavailableException}; {@link LockClients#connectLater} starts without the server and
 * locks once it runs, without a restart of the application.
 */
class RedisStartWithoutServerTest {
  private static final LockClientOptions OPTIONS =
      LockClientOptions.defaults().withOperationTimeout(Duration.ofMillis(500));

  @Test
  void connectSaysTheServerWithoutItsPasswordAndADownServerIsUnavailable() {
    int port = RedisServerProcess.freePort();
    Logger logger = (Logger) LoggerFactory.getLogger(LockClients.class);
    ListAppender<ILoggingEvent> logged = new ListAppender<>();
    logged.start();
    logger.addAppender(logged);
    Level level = logger.getLevel();
    logger.setLevel(Level.INFO); // the tests' logging configuration may show warnings only
    try {
      assertThatThrownBy(
              () -> LockClients.connect("redis://s3cret@127.0.0.1:" + port, Map.of(), OPTIONS))
          .isInstanceOf(BackendUnavailableException.class);
    } finally {
      logger.setLevel(level);
      logger.detachAppender(logged);
    }
    assertThat(logged.list)
        .extracting(ILoggingEvent::getFormattedMessage)
        .containsExactly("dlock locks on redis://***@127.0.0.1:" + port);
  }

  @Test
  void aClientStartedWhileTheServerIsDownLocksOnceItRuns() {
    try (RedisServerProcess server = RedisServerProcess.start()) {
      server.kill();
      try (LockClient client = LockClients.connectLater(server.uri(), Map.of(), OPTIONS)) {
        assertThat(client.backendName()).isEqualTo("redis");
        assertThatThrownBy(() -> client.lock("start-without-server").tryAcquire())
            .isInstanceOf(BackendUnavailableException.class);

        server.restart();

        Lease lease =
            await()
                .atMost(Duration.ofSeconds(10))
                .ignoreExceptionsInstanceOf(BackendUnavailableException.class)
                .until(() -> client.lock("start-without-server").tryAcquire(), Optional::isPresent)
                .orElseThrow();
        assertThat(client.backendName()).isEqualTo("redis");
        assertThat(lease.release()).isTrue();
      }
    }
  }
}
