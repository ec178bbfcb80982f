package io.dlock.examples.spring;

import io.dlock.LockClients;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;

/** Says where the service listens and how to try it, once it is ready. */
@Component
class ReadyBanner {
  private static final Logger log = LoggerFactory.getLogger(ReadyBanner.class);

  @EventListener
  void ready(ApplicationReadyEvent event) {
    Environment env = event.getApplicationContext().getEnvironment();
    String port = env.getProperty("local.server.port", "8080");
    String backend = LockClients.redact(env.getProperty("dlock.backend", "?"));
    boolean embedded = env.getProperty("flashsale.embedded-redis", Boolean.class, false);
    log.info(
        "Flash sale ready on http://localhost:{} with locks on {}{}; sku-42 has 100 in stock. Try:"
            + " curl -X POST 'http://localhost:{}/sale/sku-42/buy?quantity=2'",
        port,
        backend,
        embedded ? " (embedded redis-server)" : "",
        port);
  }
}
