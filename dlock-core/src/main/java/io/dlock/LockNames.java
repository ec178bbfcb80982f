package io.dlock;

import java.util.Objects;

/** The rules every lock name follows, on every backend. */
public final class LockNames {

  /**
   * The longest lock name, in characters. Long enough for composite business keys
   * ("orders:tenant-42:sku-0017"), short enough for every backend's key or path limit.
   */
  public static final int MAX_LENGTH = 256;

  private LockNames() {}

  /**
   * Returns {@code name} if it is a valid lock name.
   *
   * @throws IllegalArgumentException naming the parameter and the allowed range otherwise
   */
  public static String requireValid(String name) {
    Objects.requireNonNull(name, "name");
    if (name.isEmpty() || name.length() > MAX_LENGTH) {
      throw new IllegalArgumentException(
          "name must have 1 to " + MAX_LENGTH + " characters, but has " + name.length());
    }
    for (int i = 0; i < name.length(); i++) {
      if (Character.isISOControl(name.charAt(i))) {
        throw new IllegalArgumentException(
            "name must not contain control characters, but has one at index " + i);
      }
    }
    return name;
  }
}
