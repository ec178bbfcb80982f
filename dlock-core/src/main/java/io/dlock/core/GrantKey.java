package io.dlock.core;

/**
 * Who holds a grant in this client: the lock name and the holder, which is the acquiring thread,
 * the user's owner id (a String), or a unique object per asynchronous acquisition.
 */
record GrantKey(String lockName, Object holder) {}
