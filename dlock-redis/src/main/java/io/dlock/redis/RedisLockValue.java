package io.dlock.redis;

import io.dlock.LockInfo;
import java.time.Duration;
import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * Reads the value the scripts store under a lock key: {@code
 * <holds>|<waiters>|<token>|<request>|<since>|<holder>|<owner>}. The owner token is never exposed.
 */
final class RedisLockValue {
  private RedisLockValue() {}

  /** The lock as inspection shows it, or null if the value is not one of ours. */
  static @Nullable LockInfo describe(String name, @Nullable String value, @Nullable Long pttl) {
    if (value == null) {
      return null;
    }
    String[] fields = value.split("\\|", 7);
    if (fields.length < 7) {
      return null;
    }
    try {
      int holds = Integer.parseInt(fields[0]);
      long token = Long.parseLong(fields[2]);
      Instant since = fields[4].isEmpty() ? null : Instant.ofEpochMilli(Long.parseLong(fields[4]));
      Duration remaining = pttl == null || pttl < 0 ? null : Duration.ofMillis(pttl);
      return new LockInfo(name, fields[5], token, holds, since, remaining);
    } catch (NumberFormatException e) {
      return null;
    }
  }
}
