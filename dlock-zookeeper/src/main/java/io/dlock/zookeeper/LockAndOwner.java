package io.dlock.zookeeper;

/**
 * One lock name and owner token: the key of the backend's bookkeeping, under which the calls of one
 * owner on one lock run one after another.
 */
record LockAndOwner(String lockName, String owner) {}
