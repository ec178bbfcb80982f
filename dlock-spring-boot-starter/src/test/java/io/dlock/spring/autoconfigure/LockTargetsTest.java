package io.dlock.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.UUID;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.mock.env.MockEnvironment;

/**
 * Where the locks are is said at start, and a place that makes them useless between processes is
 * warned of: Spring Data Redis's default localhost nobody configured, a database in the process's
 * memory (issue 30, item 9).
 */
@ExtendWith(OutputCaptureExtension.class)
class LockTargetsTest {
  @Test
  void aRedisServerNobodyConfiguredOnThisMachineIsWarnedOf(CapturedOutput output) {
    LockTargets.lettuce("redis://localhost:6379", new MockEnvironment());
    assertThat(output).contains("INFO").contains("WARN").contains("spring.data.redis.host");
  }

  @Test
  void aConfiguredServerIsOnlySaid(CapturedOutput output) {
    LockTargets.lettuce(
        "redis://localhost:6379",
        new MockEnvironment().withProperty("spring.data.redis.host", "localhost"));
    LockTargets.lettuce("redis://redis.internal:6379", new MockEnvironment());
    assertThat(output)
        .contains("dlock locks on redis://redis.internal:6379")
        .doesNotContain("WARN");
  }

  @Test
  void aDatabaseInTheProcesssMemoryIsWarnedOf(CapturedOutput output) {
    JdbcDataSource h2 = new JdbcDataSource();
    h2.setURL("jdbc:h2:mem:" + UUID.randomUUID());
    LockTargets.dataSource(h2);
    assertThat(output).contains("the application's DataSource").contains("WARN");
  }
}
