package io.dlock.examples.spring;

import io.dlock.testkit.server.RedisServerProcess;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.env.EnvironmentPostProcessor;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * When no {@code dlock.backend} is configured, starts a real redis-server on a free loopback port
 * (the machine's, or the one shipped on Maven Central) and points {@code dlock.backend} at it. The
 * server stops when the JVM exits. Give {@code --dlock.backend=redis://host:6379} to use your own.
 */
public final class EmbeddedRedisEnvironment implements EnvironmentPostProcessor {
  // One server per JVM: tests start several application contexts in one JVM.
  private static final AtomicReference<RedisServerProcess> SERVER = new AtomicReference<>();

  @Override
  public void postProcessEnvironment(
      ConfigurableEnvironment environment, SpringApplication application) {
    if (environment.containsProperty("dlock.backend")) {
      return;
    }
    environment
        .getPropertySources()
        .addLast(
            new MapPropertySource(
                "embedded-redis",
                Map.of(
                    "dlock.backend", embeddedServer().uri(), "flashsale.embedded-redis", "true")));
  }

  private static RedisServerProcess embeddedServer() {
    // Called on the thread that starts the application, before any other thread uses the server.
    RedisServerProcess server = SERVER.get();
    if (server == null) {
      server = RedisServerProcess.start();
      Runtime.getRuntime().addShutdownHook(new Thread(server::close, "stop-embedded-redis"));
      SERVER.set(server);
    }
    return server;
  }
}
