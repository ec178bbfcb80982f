package io.dlock.core;

import io.dlock.spi.LockOwner;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.security.SecureRandom;
import java.util.Base64;
import org.jspecify.annotations.Nullable;

/**
 * Owner tokens for grants: 128 random bits from {@link SecureRandom}, so that no other process can
 * guess (and release or renew) a lock it does not hold.
 *
 * <p>A held grant keeps its token as two {@code long}s ({@link #bitsOf}) and renders the owner's
 * key again when it talks to the backend ({@link #ofBits}): a client may hold a hundred thousand
 * leases, and the key as a string costs three objects each.
 */
final class OwnerTokens {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final Base64.Encoder ENCODER = Base64.getUrlEncoder().withoutPadding();
  private static final Base64.Decoder DECODER = Base64.getUrlDecoder();
  private static final VarHandle LONGS =
      MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
  private static final int BYTES = 16;
  private static final int KEY_LENGTH = 2 + 22; // "t:" and 16 bytes in unpadded Base64

  private OwnerTokens() {}

  static LockOwner next() {
    byte[] bytes = new byte[BYTES];
    RANDOM.nextBytes(bytes);
    return LockOwner.ofGrant(ENCODER.encodeToString(bytes));
  }

  /**
   * The 128 bits of a grant owner made by {@link #next()}, or null for any other owner (an owner
   * id, or a key this class did not make), which the caller then keeps as it is.
   */
  static long @Nullable [] bitsOf(LockOwner owner) {
    String key = owner.key();
    if (owner.countsHolds() || key.length() != KEY_LENGTH) {
      return null;
    }
    byte[] bytes;
    try {
      bytes = DECODER.decode(key.substring(2));
    } catch (IllegalArgumentException e) {
      return null;
    }
    if (bytes.length != BYTES) {
      return null;
    }
    long[] bits = {(long) LONGS.get(bytes, 0), (long) LONGS.get(bytes, 8)};
    // Only a key that renders back to itself may be kept as bits (Base64 has one spelling per
    // value, but the last character's unused bits could differ in a key from elsewhere).
    return ofBits(bits[0], bits[1]).key().equals(key) ? bits : null;
  }

  /** The grant owner whose 128 bits are {@code high} then {@code low}. */
  static LockOwner ofBits(long high, long low) {
    byte[] bytes = new byte[BYTES];
    LONGS.set(bytes, 0, high);
    LONGS.set(bytes, 8, low);
    return LockOwner.ofGrant(ENCODER.encodeToString(bytes));
  }
}
