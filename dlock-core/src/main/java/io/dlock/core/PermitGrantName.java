package io.dlock.core;

import io.dlock.LockNames;
import org.jspecify.annotations.Nullable;

/**
 * The name under which the core keeps a grant of a semaphore's permits among its grants, so that
 * permits get a lock's waiting, renewal, loss signals and late-answer handling unchanged. It starts
 * with a control character, which {@link LockNames} refuses in every lock name: no lock can have
 * it, and {@link PermitRouting} sends exactly these names to the backend's permit store. The rest
 * is readable, for the logs that print it.
 *
 * @param semaphore the semaphore's name
 * @param permits the bound of the acquisition
 * @param count the permits it takes
 */
record PermitGrantName(String semaphore, int permits, int count) {
  private static final char MARK = '\u0001';
  private static final String PREFIX = MARK + "permits ";

  /** The grant name of {@code count} of {@code permits} permits of {@code semaphore}. */
  String grantName() {
    return PREFIX + count + " of " + permits + " of semaphore " + semaphore;
  }

  static boolean isPermit(String name) {
    return !name.isEmpty() && name.charAt(0) == MARK;
  }

  /** The permit grant a name stands for, or null for a lock's name. */
  static @Nullable PermitGrantName parse(String name) {
    if (!name.startsWith(PREFIX)) {
      return null;
    }
    int countEnd = name.indexOf(" of ", PREFIX.length());
    int permitsEnd = name.indexOf(" of semaphore ", countEnd + 4);
    if (countEnd < 0 || permitsEnd < 0) {
      throw new IllegalArgumentException("Not a permit grant name: " + name);
    }
    int count = Integer.parseInt(name.substring(PREFIX.length(), countEnd));
    int permits = Integer.parseInt(name.substring(countEnd + 4, permitsEnd));
    return new PermitGrantName(
        name.substring(permitsEnd + " of semaphore ".length()), permits, count);
  }

  /** The semaphore's name of a grant name, or the lock name as is: what users and metrics see. */
  static String displayName(String name) {
    PermitGrantName permit = isPermit(name) ? parse(name) : null;
    return permit == null ? name : permit.semaphore();
  }
}
