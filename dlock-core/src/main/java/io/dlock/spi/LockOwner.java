package io.dlock.spi;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Who asks for a lock, as the core hands it to a backend: the key the server stores with the lock
 * and compares on release and renewal, and whether the owner counts its holds on the server.
 *
 * <p>Two kinds, chosen by the core:
 *
 * <ul>
 *   <li>a <b>grant owner</b>, unique to one grant (128 random bits from {@code SecureRandom}). It
 *       holds once: asking again for a lock it holds can only be a repeated request (a client
 *       library re-sending after a reconnect) and must not add a hold;
 *   <li>an <b>owner id</b> chosen by the user ({@link io.dlock.LockOptions#withOwnerId}). Its holds
 *       are counted on the server, so that the threads and processes of one call chain share the
 *       grant.
 * </ul>
 *
 * <p>A backend passes {@link #countsHolds()} to its scripts and statements as a plain argument. The
 * {@link #key()} of the two kinds never coincide (a grant owner's key is {@code t:} and its random
 * bits, an owner id's is {@code o:} and the id): that is what the prefixes are for, and nothing
 * reads them.
 *
 * @param key what the server stores with the lock and compares, at most 130 characters
 * @param ownerId the user's owner id, or null for a grant owner
 */
public record LockOwner(String key, @Nullable String ownerId) {
  private static final String GRANT_PREFIX = "t:";
  private static final String OWNER_ID_PREFIX = "o:";

  public LockOwner {
    Objects.requireNonNull(key, "key");
    if (ownerId != null && !key.equals(OWNER_ID_PREFIX + ownerId)) {
      throw new IllegalArgumentException("the key of owner id '" + ownerId + "' must be o:<id>");
    }
    if (ownerId == null && !key.startsWith(GRANT_PREFIX)) {
      throw new IllegalArgumentException("a grant owner's key must start with t:");
    }
  }

  /** The owner of one grant, with {@code randomPart} drawn from {@code SecureRandom}. */
  public static LockOwner ofGrant(String randomPart) {
    return new LockOwner(GRANT_PREFIX + Objects.requireNonNull(randomPart, "randomPart"), null);
  }

  /** The owner id {@code id}, whose holds are counted on the server. */
  public static LockOwner ofOwnerId(String id) {
    return new LockOwner(OWNER_ID_PREFIX + Objects.requireNonNull(id, "id"), id);
  }

  /**
   * Whether the server counts this owner's holds: true for an owner id (every acquisition adds a
   * hold, every release takes one away), false for a grant owner (it holds once; a second request
   * is a repeat).
   */
  public boolean countsHolds() {
    return ownerId != null;
  }

  @Override
  public String toString() {
    // The random key of a grant owner is a secret of its holder: never print it whole.
    return ownerId != null
        ? "owner id " + ownerId
        : "grant owner " + key.substring(0, Math.min(key.length(), 6)) + "...";
  }
}
