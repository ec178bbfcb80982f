package io.dlock.spring.support;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.SslVerifyMode;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisPassword;
import org.springframework.data.redis.connection.RedisSentinelConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.RedisStaticMasterReplicaConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Which server dlock reaches for each kind of Spring Data configuration, and the configurations it
 * refuses rather than connect somewhere else. The factories are never started: only read.
 */
class LettuceServerTest {
  private static final String REMEDY = "Set dlock.backend instead.";

  private static final LettuceClientConfiguration PLAIN =
      LettuceClientConfiguration.builder().build();

  @Test
  void standaloneServerWithDatabaseAndCredentials() {
    RedisStandaloneConfiguration standalone =
        new RedisStandaloneConfiguration("cache.internal", 6380);
    standalone.setDatabase(7);
    standalone.setUsername("app");
    standalone.setPassword(RedisPassword.of("s3cret"));

    LettuceServer target = target(new LettuceConnectionFactory(standalone, PLAIN));

    assertThat(target.uri()).isEqualTo("redis://cache.internal:6380/7");
    assertThat(target.username()).isEqualTo("app");
    assertThat(target.password()).containsExactly("s3cret".toCharArray());
  }

  @Test
  void tlsKeepsAWeakerPeerVerificationAndBracketsIpv6() {
    LettuceClientConfiguration tls =
        LettuceClientConfiguration.builder().useSsl().verifyPeer(SslVerifyMode.CA).build();
    LettuceServer target =
        target(new LettuceConnectionFactory(new RedisStandaloneConfiguration("::1", 6379), tls));

    assertThat(target.uri()).isEqualTo("rediss://[::1]:6379/0?verifyPeer=CA");
    assertThat(target.password()).isNull();
  }

  @Test
  void sentinelPrimaryAndClusterNodes() {
    RedisSentinelConfiguration sentinel =
        new RedisSentinelConfiguration()
            .master("orders")
            .sentinel("s1", 26379)
            .sentinel("s2", 26380);
    sentinel.setDatabase(2);
    sentinel.setPassword(RedisPassword.of("p"));
    LettuceServer viaSentinel = target(new LettuceConnectionFactory(sentinel, PLAIN));
    assertThat(viaSentinel.uri())
        .startsWith("redis-sentinel://")
        .endsWith("/2#orders")
        .contains("s1:26379", "s2:26380");
    assertThat(viaSentinel.password()).containsExactly('p');

    LettuceServer cluster =
        target(
            new LettuceConnectionFactory(
                new RedisClusterConfiguration(List.of("n1:7000", "n2:7001")), PLAIN));
    assertThat(cluster.uri()).startsWith("redis-cluster://").contains("n1:7000", "n2:7001");
  }

  @Test
  void refusesWhatItCannotFollow() {
    RedisSentinelConfiguration sentinel =
        new RedisSentinelConfiguration().master("orders").sentinel("s1", 26379);
    sentinel.setSentinelPassword("other");
    assertThatThrownBy(() -> target(new LettuceConnectionFactory(sentinel, PLAIN)))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("credentials of its own for the Sentinels")
        .hasMessageEndingWith(". " + REMEDY);

    LettuceClientConfiguration tls = LettuceClientConfiguration.builder().useSsl().build();
    RedisSentinelConfiguration plainSentinel =
        new RedisSentinelConfiguration().master("orders").sentinel("s1", 26379);
    assertThatThrownBy(() -> target(new LettuceConnectionFactory(plainSentinel, tls)))
        .hasMessageContaining("TLS through Sentinel");

    RedisStaticMasterReplicaConfiguration masterReplica =
        new RedisStaticMasterReplicaConfiguration("redis-primary.internal", 6380);
    masterReplica.setDatabase(3);
    assertThatThrownBy(() -> target(new LettuceConnectionFactory(masterReplica, PLAIN)))
        .as("not the default localhost:6379 its standalone getter answers")
        .hasMessageContaining("RedisStaticMasterReplicaConfiguration");

    LettuceClientConfiguration unverified =
        LettuceClientConfiguration.builder().useSsl().disablePeerVerification().build();
    assertThatThrownBy(
            () ->
                target(
                    new LettuceConnectionFactory(
                        new RedisClusterConfiguration(List.of("n1:7000")), unverified)))
        .hasMessageContaining("verifies a Cluster's TLS peers");
  }

  private static LettuceServer target(LettuceConnectionFactory factory) {
    return LettuceServer.target(factory, REMEDY);
  }
}
