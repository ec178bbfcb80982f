package io.dlock.redis;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Request ids stored with a lock by each acquire and release, so that a script the client library
 * sends a second time after a reconnect (Lettuce retries unacknowledged commands) is recognised and
 * changes nothing. They need to be unique, not secret: the owner token is the secret.
 */
final class RequestIds {
  private RequestIds() {}

  static String next() {
    ThreadLocalRandom random = ThreadLocalRandom.current();
    return Long.toHexString(random.nextLong()) + Long.toHexString(random.nextLong());
  }
}
