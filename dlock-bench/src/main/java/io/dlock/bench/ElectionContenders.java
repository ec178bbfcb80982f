package io.dlock.bench;

import io.dlock.LeaderElection;
import io.dlock.LeadershipListener;
import io.dlock.LockClient;
import io.dlock.LockOptions;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;

/**
 * The election contenders: dlock's {@link LeaderElection} on any backend (given how to connect a
 * client to an address), Curator's {@link LeaderLatch} and {@link LeaderSelector}.
 */
final class ElectionContenders {
  private ElectionContenders() {}

  /** dlock's election with a renewed lease, over clients that {@code connect} makes. */
  static final class Dlock implements ElectionContender {
    private final String name;
    private final String bound;
    private final InetSocketAddress server;
    private final Function<String, LockClient> connect;
    private final Duration lease;

    /**
     * @param connect a new client of the backend at an address ({@code host:port})
     */
    Dlock(
        String name,
        String bound,
        InetSocketAddress server,
        Function<String, LockClient> connect,
        Duration lease) {
      this.name = name;
      this.bound = bound;
      this.server = server;
      this.connect = connect;
      this.lease = lease;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public String bound() {
      return bound;
    }

    @Override
    public InetSocketAddress server() {
      return server;
    }

    @Override
    public Candidate candidate(String election, String address, Runnable elected) {
      LockClient client = connect.apply(address);
      LeaderElection candidacy =
          client.election(
              election,
              LockOptions.defaults().withRenewedLease(lease),
              LeadershipListener.of(term -> elected.run(), (term, reason) -> {}));
      return new Candidate() {
        @Override
        public void join() {
          candidacy.join();
        }

        @Override
        public void stepDown() {
          candidacy.close(); // resigns: releases the term's lock, competes no more
        }

        @Override
        public void close() {
          candidacy.close();
          client.close();
        }
      };
    }
  }

  /**
   * A Curator client as dlock's ZooKeeper backend makes its own: the same session timeout,
   * connection timeout and retry policy (bounded exponential back-off, 3 retries).
   */
  static CuratorFramework curator(String address, Duration session, Duration connection)
      throws InterruptedException {
    int connectionMs = (int) connection.toMillis();
    CuratorFramework client =
        CuratorFrameworkFactory.newClient(
            address,
            (int) session.toMillis(),
            connectionMs,
            new BoundedExponentialBackoffRetry(50, Math.max(50, connectionMs / 4), 3));
    client.start();
    if (!client.blockUntilConnected(20, TimeUnit.SECONDS)) {
      client.close();
      throw new IllegalStateException("No connection to ZooKeeper at " + address);
    }
    return client;
  }

  /** Curator's LeaderLatch or LeaderSelector, each candidate with a Curator client of its own. */
  static final class Curator implements ElectionContender {
    /** The name of the LeaderLatch row, the one the others are compared to. */
    static final String LATCH = "Curator LeaderLatch";

    private final boolean selector;
    private final String bound;
    private final InetSocketAddress server;
    private final Duration session;
    private final Duration connection;

    Curator(
        boolean selector,
        String bound,
        InetSocketAddress server,
        Duration session,
        Duration connection) {
      this.selector = selector;
      this.bound = bound;
      this.server = server;
      this.session = session;
      this.connection = connection;
    }

    @Override
    public String name() {
      return selector ? "Curator LeaderSelector" : LATCH;
    }

    @Override
    public String bound() {
      return bound;
    }

    @Override
    public InetSocketAddress server() {
      return server;
    }

    @Override
    public Candidate candidate(String election, String address, Runnable elected)
        throws InterruptedException {
      CuratorFramework client = curator(address, session, connection);
      return selector
          ? selectorCandidate(client, "/bench-election/selector-" + election, elected)
          : latchCandidate(client, "/bench-election/latch-" + election, elected);
    }

    private static Candidate latchCandidate(
        CuratorFramework client, String path, Runnable elected) {
      LeaderLatch latch = new LeaderLatch(client, path);
      latch.addListener(
          new LeaderLatchListener() {
            @Override
            public void isLeader() {
              elected.run();
            }

            @Override
            public void notLeader() {}
          });
      return new Candidate() {
        @Override
        public void join() throws Exception {
          latch.start();
        }

        @Override
        public void stepDown() throws IOException {
          latch.close(); // deletes its node: the next in line is told
        }

        @Override
        public void close() {
          if (latch.getState() == LeaderLatch.State.STARTED) {
            try {
              latch.close();
            } catch (IOException | RuntimeException e) {
              // its client is cut off (the killed candidate): the session goes with the client
            }
          }
          client.close();
        }
      };
    }

    /**
     * A LeaderSelector leads while {@code takeLeadership} runs; stepping down returns from it (the
     * usual way: the work is done), which releases its mutex.
     */
    private static Candidate selectorCandidate(
        CuratorFramework client, String path, Runnable elected) {
      CountDownLatch steppedDown = new CountDownLatch(1);
      CountDownLatch returned = new CountDownLatch(1);
      LeaderSelector selector =
          new LeaderSelector(
              client,
              path,
              new LeaderSelectorListenerAdapter() {
                @Override
                public void takeLeadership(CuratorFramework c) {
                  elected.run();
                  try {
                    steppedDown.await();
                  } catch (InterruptedException e) {
                    // Leadership cancelled (the connection was lost): stop leading, as asked.
                  } finally {
                    returned.countDown();
                  }
                }
              });
      return new Candidate() {
        @Override
        public void join() {
          selector.start();
        }

        @Override
        public void stepDown() {
          steppedDown.countDown();
        }

        @Override
        public void close() {
          steppedDown.countDown();
          try {
            // Let a leader return and give its mutex back before its client goes.
            if (selector.hasLeadership()) {
              returned.await(5, TimeUnit.SECONDS);
            }
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          selector.close();
          client.close();
        }
      };
    }
  }
}
