package io.dlock.core;

import io.dlock.BackendCapability;
import io.dlock.spi.LockAdministration;
import io.dlock.spi.LockBackend;
import io.dlock.spi.PermitStore;
import io.dlock.spi.ReleaseSignals;
import io.dlock.spi.SessionBoundHolds;
import io.dlock.spi.WaitQueue;
import java.util.Collections;
import java.util.EnumSet;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What a backend can do beyond the three primitives, asked for once when a client is made: each
 * optional ability (null where it has none) and the capabilities the client reports from them.
 */
record BackendAbilities(
    String backendName,
    @Nullable ReleaseSignals signals,
    @Nullable WaitQueue waitQueue,
    @Nullable SessionBoundHolds sessions,
    @Nullable LockAdministration administrationOrNull,
    @Nullable PermitStore permitStoreOrNull,
    Set<BackendCapability> capabilities) {

  static BackendAbilities of(LockBackend backend) {
    ReleaseSignals signals = backend.releaseSignals().orElse(null);
    WaitQueue waitQueue = backend.waitQueue().orElse(null);
    SessionBoundHolds sessions = backend.sessionBoundHolds().orElse(null);
    LockAdministration administration = backend.administration().orElse(null);
    PermitStore permits = backend.permits().orElse(null);
    EnumSet<BackendCapability> set = EnumSet.noneOf(BackendCapability.class);
    if (signals != null) {
      set.add(BackendCapability.RELEASE_SIGNALS);
    }
    if (waitQueue != null) {
      set.add(BackendCapability.WAIT_QUEUE);
    }
    if (sessions != null) {
      set.add(BackendCapability.SESSION_BOUND_HOLDS);
    }
    if (administration != null) {
      set.add(BackendCapability.ADMINISTRATION);
    }
    if (permits != null) {
      set.add(BackendCapability.SEMAPHORES);
    }
    if (backend.sharesOwnerIdsAcrossClients()) {
      set.add(BackendCapability.OWNER_IDS_ACROSS_CLIENTS);
    }
    return new BackendAbilities(
        backend.name(),
        signals,
        waitQueue,
        sessions,
        administration,
        permits,
        Collections.unmodifiableSet(set));
  }

  /**
   * The backend's administration.
   *
   * @throws UnsupportedOperationException naming the backend and how it would add it, if it has
   *     none
   */
  LockAdministration administration() {
    if (administrationOrNull == null) {
      throw new UnsupportedOperationException(
          "The "
              + backendName
              + " backend cannot list or break locks: its client's capabilities() lack"
              + " ADMINISTRATION (every built-in backend has it; a backend of your own adds it by"
              + " returning a LockAdministration from administration())");
    }
    return administrationOrNull;
  }

  /**
   * The backend's semaphores.
   *
   * @throws UnsupportedOperationException naming the backend and what has them, if it has none
   */
  PermitStore permitStore() {
    if (permitStoreOrNull == null) {
      throw new UnsupportedOperationException(
          "The "
              + backendName
              + " backend has no leased semaphores: its client's capabilities() lack SEMAPHORES"
              + " (Redis, ZooKeeper and the JDBC lease-row mode have them; a backend of your own"
              + " adds them by returning a PermitStore from permits())");
    }
    return permitStoreOrNull;
  }
}
