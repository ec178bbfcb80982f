package io.dlock.examples.spring;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * The flash sale as a REST service: {@code POST /sale/{sku}/buy?quantity=2} takes stock under
 * {@code @Locked(name = "stock", key = "#sku")}. Without {@code dlock.backend}, it starts its own
 * redis-server on a free loopback port ({@link EmbeddedRedisEnvironment}), so it runs on a machine
 * with nothing installed.
 */
@SpringBootApplication
public class FlashSaleApplication {

  /** Starts the service (port 8080 unless {@code --server.port=...}). */
  public static void main(String[] args) {
    SpringApplication.run(FlashSaleApplication.class, args);
  }
}
