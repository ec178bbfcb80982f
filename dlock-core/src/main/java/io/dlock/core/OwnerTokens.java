package io.dlock.core;

import io.dlock.spi.LockOwner;
import java.security.SecureRandom;
import java.util.Base64;

/**
 * Owner tokens for grants: 128 random bits from {@link SecureRandom}, so that no other process can
 * guess (and release or renew) a lock it does not hold.
 */
final class OwnerTokens {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();

  private OwnerTokens() {}

  static LockOwner next() {
    byte[] bytes = new byte[16];
    RANDOM.nextBytes(bytes);
    return LockOwner.ofGrant(ENCODER.encodeToString(bytes));
  }
}
