package io.dlock.spring.autoconfigure;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.spi.AcceptedProperties;
import io.dlock.spi.LockBackendProvider;
import java.io.IOException;
import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.DataObjectPropertyName;
import org.springframework.boot.json.JsonParserFactory;

/**
 * The metadata IDEs complete {@code dlock.*} from (written by spring-boot-configuration-processor,
 * merged with the hand-written additional file) covers every property the start-up check knows, and
 * {@code dlock-idempotency-web}'s, whose module does not run the processor.
 */
class ConfigurationMetadataTest {

  @Test
  void everyKnownPropertyHasMetadata() throws IOException {
    List<String> documented = documented();
    assertThat(documented)
        .containsAll(new KnownProperties().add("dlock", DlockProperties.class).names())
        .contains(
            "dlock.idempotency.enabled",
            "dlock.idempotency.header-name",
            "dlock.idempotency.methods",
            "dlock.idempotency.required-methods",
            "dlock.idempotency.stored-headers",
            "dlock.idempotency.max-body-bytes",
            "dlock.idempotency.caller-header",
            "dlock.idempotency.url-patterns",
            "dlock.idempotency.order",
            "dlock.idempotency.store-bean",
            "dlock.idempotency.in-progress-timeout",
            "dlock.idempotency.retention",
            "dlock.idempotency.redis.key-prefix",
            "dlock.idempotency.jdbc.table-prefix",
            "dlock.idempotency.jdbc.create-schema");
  }

  @Test
  void theBackendPropertiesHintNamesEveryBackendKeyAsSpringUsersWriteThem() throws IOException {
    List<?> hints = (List<?>) metadata().get("hints");
    List<String> keys =
        hints.stream()
            .map(h -> (Map<?, ?>) h)
            .filter(h -> "dlock.backend-properties.keys".equals(h.get("name")))
            .flatMap(h -> ((List<?>) h.get("values")).stream())
            .map(v -> (String) ((Map<?, ?>) v).get("value"))
            .toList();
    // Every backend on the class path, as its provider says what it reads.
    List<String> uris = List.of("redis://h", "redlock://h:1,h:2,h:3", "zk://h", "jdbc:h2:mem:x");
    for (LockBackendProvider provider : ServiceLoader.load(LockBackendProvider.class)) {
      for (String uri : uris) {
        AcceptedProperties accepted =
            provider.supports(uri) ? provider.acceptedProperties(uri) : null;
        if (accepted != null) {
          for (String key : accepted.names()) {
            assertThat(keys).as(uri).contains(DataObjectPropertyName.toDashedForm(key));
          }
        }
      }
    }
  }

  private static List<String> documented() throws IOException {
    return ((List<?>) metadata().get("properties"))
        .stream().map(p -> (String) ((Map<?, ?>) p).get("name")).toList();
  }

  /** The starter's file: the test classes have one of their own (UnknownPropertiesTest's). */
  private static Map<String, Object> metadata() throws IOException {
    Enumeration<URL> files =
        ConfigurationMetadataTest.class
            .getClassLoader()
            .getResources("META-INF/spring-configuration-metadata.json");
    for (URL file : Collections.list(files)) {
      if (file.toString().contains("test-classes")) {
        continue;
      }
      try (InputStream in = file.openStream()) {
        return JsonParserFactory.getJsonParser()
            .parseMap(new String(in.readAllBytes(), StandardCharsets.UTF_8));
      }
    }
    throw new AssertionError("no spring-configuration-metadata.json of the starter");
  }
}
