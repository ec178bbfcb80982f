package io.dlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.testkit.server.RedisServerProcess;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;

/**
 * On a fresh machine there is no redis-server on the PATH: the tests and the demo then run the
 * binary shipped in a Maven Central artifact. This forces that path even where Redis is installed.
 */
class ShippedRedisBinaryTest {

  @AfterEach
  void clearProperty() {
    System.clearProperty("dlock.redis.server");
  }

  @Test
  @EnabledOnOs(
      value = OS.LINUX,
      architectures = {"amd64", "x86_64"},
      disabledReason = "the shipped redis-server binary is for Linux x86-64")
  void theShippedBinaryStartsAndAnswers() {
    System.setProperty("dlock.redis.server", "embedded");
    try (RedisServerProcess server = RedisServerProcess.start()) {
      assertThat(server.binary().toString()).doesNotEndWith("/usr/bin/redis-server");
      assertThat(server.command("PING")).startsWith("+PONG");
      assertThat(server.command("INFO", "server")).contains("redis_version:7.0.15");
    }
  }
}
