package io.dlock.zookeeper;

import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.api.CuratorEvent;

/** A listing of the queue requested after {@code node} was created. */
record PrefetchedListing(String node, CompletableFuture<CuratorEvent> children) {}
