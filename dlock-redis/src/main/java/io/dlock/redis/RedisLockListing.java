package io.dlock.redis;

import io.dlock.LockInfo;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/** The locks whose names match a pattern, read with {@code SCAN}, {@code GET} and {@code PTTL}. */
final class RedisLockListing {
  private RedisLockListing() {}

  /** The locks held now whose names match {@code namePattern} (a {@code SCAN MATCH} pattern). */
  static CompletableFuture<List<LockInfo>> list(
      RedisClusterAsyncCommands<String, String> commands, RedisKeys keys, String namePattern) {
    String match = keys.lock(namePattern);
    return scan(
            commands,
            ScanCursor.INITIAL,
            ScanArgs.Builder.matches(match).limit(500),
            new ArrayList<>())
        .thenCompose(found -> describe(commands, keys, found));
  }

  private static CompletableFuture<List<String>> scan(
      RedisClusterAsyncCommands<String, String> commands,
      ScanCursor cursor,
      ScanArgs args,
      List<String> found) {
    return commands
        .scan(cursor, args)
        .toCompletableFuture()
        .thenCompose(
            page -> {
              found.addAll(page.getKeys());
              return page.isFinished()
                  ? CompletableFuture.completedFuture(found)
                  : scan(commands, page, args, found);
            });
  }

  private static CompletableFuture<List<LockInfo>> describe(
      RedisClusterAsyncCommands<String, String> commands, RedisKeys keys, List<String> lockKeys) {
    List<CompletableFuture<LockInfo>> infos = new ArrayList<>();
    for (String key : lockKeys) {
      String name = keys.nameOfLock(key);
      if (name == null) {
        continue; // a fencing counter or a foreign key that happens to match
      }
      CompletableFuture<String> value = commands.get(key).toCompletableFuture();
      CompletableFuture<Long> ttl = commands.pttl(key).toCompletableFuture();
      infos.add(value.thenCombine(ttl, (v, t) -> RedisLockValue.describe(name, v, t)));
    }
    return CompletableFuture.allOf(infos.toArray(new CompletableFuture<?>[0]))
        .thenApply(
            done ->
                infos.stream()
                    .map(CompletableFuture::join)
                    .filter(Objects::nonNull)
                    .sorted(Comparator.comparing(LockInfo::name))
                    .toList());
  }
}
