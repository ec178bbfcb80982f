package io.dlock.cli;

import io.dlock.testkit.server.RedisServerProcess;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The command line against Redlock over three redis-servers the test starts (issue 14, item 8:
 * {@code --backend redlock://...} is documented and must work).
 */
class RedlockCliTest extends CliContract {
  private static final List<RedisServerProcess> masters = new ArrayList<>();

  @BeforeAll
  static void start() throws Exception {
    for (int i = 0; i < 3; i++) {
      masters.add(RedisServerProcess.start());
    }
  }

  @AfterAll
  static void stop() {
    masters.forEach(RedisServerProcess::close);
  }

  private static String uri() {
    return "redlock://"
        + masters.stream().map(m -> "127.0.0.1:" + m.port()).collect(Collectors.joining(","))
        // Four dlock processes start at once on two cores: the default 50 ms per master is for
        // a quiet data-centre network, not for this.
        + "?nodeTimeout=PT0.5S";
  }

  @Override
  protected String backendUri() {
    return uri();
  }

  @Override
  protected void deleteLockOnServer(String name) {
    masters.forEach(m -> m.command("DEL", "dlock:{" + name + "}"));
  }
}
