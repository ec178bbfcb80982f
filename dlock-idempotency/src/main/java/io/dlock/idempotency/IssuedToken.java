package io.dlock.idempotency;

import java.time.Duration;
import java.util.Objects;

/**
 * A freshly issued one-time token: hand {@link #value()} to the client, which sends it back with
 * the request it guards. The value is unguessable (160 bits from {@code SecureRandom}, URL-safe);
 * the store keeps only its SHA-256 hash.
 *
 * @param value the token to hand out
 * @param timeToLive how long it can be consumed, measured by the store's clock from its issue
 */
public record IssuedToken(String value, Duration timeToLive) {
  public IssuedToken {
    Objects.requireNonNull(value, "value");
    Objects.requireNonNull(timeToLive, "timeToLive");
  }

  @Override
  public String toString() {
    // The value is a bearer secret: keep it out of logs.
    return "IssuedToken[timeToLive=" + timeToLive + "]";
  }
}
