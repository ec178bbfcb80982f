/**
 * The ZooKeeper backend: {@link io.dlock.zookeeper.ZooKeeperLocks} creates lock clients, {@link
 * io.dlock.zookeeper.ZooKeeperLockSettings} says how to reach the ensemble, and {@link
 * io.dlock.zookeeper.ZooKeeperLockBackend} implements the SPI with ephemeral sequential queue
 * nodes, predecessor watches and czxid fencing tokens. See {@code docs/zookeeper.md}.
 */
@NullMarked
package io.dlock.zookeeper;

import org.jspecify.annotations.NullMarked;
