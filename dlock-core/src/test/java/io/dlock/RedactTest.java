package io.dlock;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** One redaction for every backend's URI, the CLI and the starter: no secret reaches a message. */
class RedactTest {

  @ParameterizedTest(name = "{0}")
  @CsvSource(
      delimiter = '|',
      value = {
        "redis://app:s3cret@cache:6379/0 | redis://app:***@cache:6379/0",
        "rediss://s3cret@cache:6379 | rediss://***@cache:6379",
        "redis-sentinel://:s3cret@s1:26379,s2:26379/0#mymaster"
            + " | redis-sentinel://:***@s1:26379,s2:26379/0#mymaster",
        "jdbc:postgresql://db:5432/app?user=app&password=s3cret&ssl=true"
            + " | jdbc:postgresql://db:5432/app?user=app&password=***&ssl=true",
        "jdbc:mariadb://app:s3cret@db:3306/app | jdbc:mariadb://app:***@db:3306/app",
        "jdbc:sqlserver://db;user=app;Password=s3cret;encrypt=true"
            + " | jdbc:sqlserver://db;user=app;Password=***;encrypt=true",
        "zk://zk1:2181,zk2:2181/locks?acl=digest&digest.user=app&digest.password=s3cret"
            + " | zk://zk1:2181,zk2:2181/locks?acl=digest&digest.user=app&digest.password=***",
        "redis://cache:6379 | redis://cache:6379",
        "h2:mem:locks | h2:mem:locks"
      })
  void hidesEverySecretAndKeepsTheRest(String uri, String shown) {
    assertThat(LockClients.redact(uri)).isEqualTo(shown);
  }
}
