package io.dlock.spi;

import io.dlock.LockInfo;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/** An optional ability: the backend can list its locks and break one for an administrator. */
public interface LockAdministration {

  /**
   * The locks held now whose names match {@code namePattern} (a glob: {@code *} any characters,
   * {@code ?} one), for inspection.
   */
  CompletableFuture<List<LockInfo>> inspect(String namePattern);

  /**
   * Deletes the lock whatever its owner: an administrator's break of a stuck lock. The holder finds
   * out at its next renewal.
   *
   * @return the lock as it was just before, or empty if it was not held
   */
  CompletableFuture<Optional<LockInfo>> forceRelease(String lockName);
}
