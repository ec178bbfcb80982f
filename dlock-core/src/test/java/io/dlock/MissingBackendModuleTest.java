package io.dlock;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A backend URI whose module is not on the class path (here: none is, in dlock-core's own tests)
 * names the module to add, not just "not supported" (found by a new user: {@code zk://} without
 * dlock-zookeeper).
 */
class MissingBackendModuleTest {
  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "zk://127.0.0.1:2181, dlock-zookeeper",
    "redis://127.0.0.1:6379, dlock-redis",
    "rediss-cluster://127.0.0.1:7000, dlock-redis",
    "'redlock://127.0.0.1:6379,127.0.0.1:6380', dlock-redis",
    "jdbc:postgresql://127.0.0.1:5432/app, dlock-jdbc"
  })
  void aUriOfAModuleNotOnTheClassPathNamesTheModule(String uri, String module) {
    assertThatThrownBy(() -> LockClients.connect(uri))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("io.dlock:" + module)
        .hasMessageContaining("not on the class path");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({"etcd://127.0.0.1:2379", "consul://127.0.0.1:8500"})
  void aUriNoModuleTakesSaysNoBackendIsThere(String uri) {
    assertThatThrownBy(() -> LockClients.connect(uri))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("is not supported")
        .hasMessageContaining("no backend module is on the class path");
  }
}
