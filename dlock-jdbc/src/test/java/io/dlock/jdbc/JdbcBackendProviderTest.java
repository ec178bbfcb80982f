package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** {@link LockClients#connect} finds the JDBC provider by URI and applies its properties. */
class JdbcBackendProviderTest {
  private static final Map<String, String> SCHEMA =
      Map.of("table", TestDatabases.TABLE, "createSchema", "true");

  @Test
  void h2RowLocksThroughTheProvider() {
    try (LockClient client =
        LockClients.connect(TestDatabases.H2_URL, with("mode", "row"), options())) {
      assertThat(client.backendName()).isEqualTo("jdbc");
      String name = "provider-" + UUID.randomUUID();
      Lease lease = client.lock(name).tryAcquire().orElseThrow();
      assertThat(client.inspect(name))
          .singleElement()
          .satisfies(i -> assertThat(i.name()).isEqualTo(name));
      assertThat(lease.release()).isTrue();
    }
  }

  @Test
  void postgresSessionLocksThroughTheProviderWithTheUserAsAProperty() {
    String url = TestDatabases.postgres();
    String user = url.replaceAll(".*[?&]user=([^&]*).*", "$1");
    String withoutUser = url.replaceAll("[?&]user=[^&]*", "");
    Map<String, String> props =
        Map.of(
            "table", TestDatabases.TABLE,
            "createSchema", "true",
            "mode", "session",
            "username", user,
            "password", "");
    try (LockClient client = LockClients.connect(withoutUser, props, options());
        LockClient other = LockClients.connect(withoutUser, props, options())) {
      String name = "provider-" + UUID.randomUUID();
      Lease lease = client.lock(name).tryAcquire().orElseThrow();
      assertThat(other.lock(name).tryAcquire()).isEmpty();
      assertThat(lease.release()).isTrue();
      assertThat(other.lock(name).tryAcquire()).isPresent();
    }
  }

  @Test
  void badPropertiesNameTheParameterAndTheAllowedValues() {
    assertThatThrownBy(
            () -> LockClients.connect(TestDatabases.H2_URL, with("mode", "advisory"), options()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("mode must be one of lease-row, session, row");
    assertThatThrownBy(
            () -> LockClients.connect(TestDatabases.H2_URL, with("createSchema", "yes"), options()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("createSchema must be true or false");
    // A key the backend does not read is refused, not ignored, naming the closest one.
    assertThatThrownBy(
            () -> LockClients.connect(TestDatabases.H2_URL, with("user", "app"), options()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("property 'user' is not read by the JDBC backend")
        .hasMessageContaining("did you mean username?");
    assertThat(new JdbcBackendProvider().supports("jdbc:oracle:thin:@x")).isFalse();
    assertThat(new JdbcBackendProvider().supports("jdbc:mysql://x/y")).isTrue();
  }

  private static Map<String, String> with(String key, String value) {
    java.util.HashMap<String, String> props = new java.util.HashMap<>(SCHEMA);
    props.put(key, value);
    return props;
  }

  private static LockClientOptions options() {
    return LockClientOptions.defaults();
  }
}
