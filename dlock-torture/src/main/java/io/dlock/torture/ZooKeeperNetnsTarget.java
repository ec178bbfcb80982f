package io.dlock.torture;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * A 3-member ZooKeeper ensemble whose members are processes of their own, each in a network
 * namespace of its own ({@link NamespacedNetwork}), so that members can be cut off from each other
 * while their clients still reach them: the partition between servers that proxies in front of
 * clients cannot make. Its scenario is {@link Scenario#MEMBER_PARTITION}: the leader, then a
 * follower, in turn, cut off from the other two members. A restart kills the leading member's
 * process and starts it again.
 */
final class ZooKeeperNetnsTarget extends ZooKeeperEnsembleTarget {
  static final String NAME = "zookeeper-netns";
  private static final int MEMBERS = 3;
  private static final int CLIENT_PORT = 2181;
  private final NamespacedNetwork network;
  private final Path dataDir;
  private final Process[] members = new Process[MEMBERS + 1];
  private int cut; // the member cut off, or 0
  private int cuts;

  /**
   * Each member's log (member.log in its data directory) says what the quorum did, for diagnosis.
   */
  private static final String MEMBER_LOGGING =
      "<configuration><appender name=\"OUT\" class=\"ch.qos.logback.core.ConsoleAppender\">"
          + "<encoder><pattern>%d{HH:mm:ss.SSS} %-5level [%thread] %logger{36} - %msg%n</pattern>"
          + "</encoder></appender><logger name=\"org.apache.zookeeper.server.quorum\""
          + " level=\"INFO\"/><root level=\"WARN\"><appender-ref ref=\"OUT\"/></root>"
          + "</configuration>";

  ZooKeeperNetnsTarget() {
    network = new NamespacedNetwork(MEMBERS);
    try {
      dataDir = Files.createTempDirectory("dlock-zookeeper-netns");
      Files.writeString(dataDir.resolve("logback.xml"), MEMBER_LOGGING);
      for (int m = 1; m <= MEMBERS; m++) {
        writeConfig(m);
        members[m] = start(m);
      }
      leader(); // the ensemble serves once it has elected a leader
    } catch (IOException | RuntimeException e) {
      close();
      throw e instanceof IOException io ? new UncheckedIOException(io) : (RuntimeException) e;
    }
  }

  /** Why this target cannot run here, or empty if it can. */
  static java.util.Optional<String> unavailableReason() {
    return NamespacedNetwork.unavailableReason();
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public List<InetSocketAddress> servers() {
    return IntStream.rangeClosed(1, MEMBERS)
        .mapToObj(m -> new InetSocketAddress(network.clientAddress(m), CLIENT_PORT))
        .toList();
  }

  @Override
  public List<Scenario> defaultScenarios() {
    return List.of(Scenario.MEMBER_PARTITION);
  }

  @Override
  public boolean membersPartitionable() {
    return true;
  }

  /** The leader and a follower, in turn, cut off from the other two members. */
  @Override
  public String cutMember() {
    int leader = leader() + 1;
    boolean cutLeader = cuts++ % 2 == 0;
    cut = cutLeader ? leader : leader % MEMBERS + 1;
    network.cutPeerLink(cut);
    return "member "
        + cut
        + (cutLeader ? " (the leader)" : " (a follower)")
        + " cut off from the other members";
  }

  /** Heals the cut; says what each member was doing at the end of it (leader, follower, down). */
  @Override
  public String healMembers() {
    String modes =
        IntStream.range(0, MEMBERS)
            .mapToObj(i -> "member " + (i + 1) + " " + mode(servers().get(i)))
            .collect(java.util.stream.Collectors.joining(", ", "at the end of the cut: ", ""));
    if (cut != 0) {
      network.healPeerLink(cut);
      cut = 0;
    }
    return modes;
  }

  @Override
  public void restart() {
    int leader = leader() + 1;
    stop(leader);
    members[leader] = start(leader);
  }

  @Override
  public String restartDescription() {
    return "the leading member's process killed and started again";
  }

  @Override
  public void close() {
    for (int m = 1; m <= MEMBERS; m++) {
      stop(m);
    }
    network.close();
    if (dataDir != null) {
      try (Stream<Path> files = Files.walk(dataDir)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      } catch (IOException e) {
        // a temporary directory: left to the system
      }
    }
  }

  /**
   * Each member's own configuration: ticks of 200 ms, the quorum and election ports on the peer
   * network (the only path between members), the client port on every address of its namespace.
   */
  private void writeConfig(int m) throws IOException {
    Path dir = Files.createDirectories(dataDir.resolve("member-" + m));
    Files.writeString(dir.resolve("myid"), Integer.toString(m));
    List<String> lines = new ArrayList<>();
    lines.add("tickTime=" + TICK_MILLIS);
    lines.add("initLimit=10");
    lines.add("syncLimit=5");
    lines.add("dataDir=" + dir);
    lines.add("clientPort=" + CLIENT_PORT);
    lines.add("maxSessionTimeout=60000");
    lines.add("admin.enableServer=false");
    lines.add("4lw.commands.whitelist=srvr,ruok");
    for (int peer = 1; peer <= MEMBERS; peer++) {
      lines.add("server." + peer + "=" + network.peerAddress(peer) + ":2888:3888");
    }
    Files.write(dir.resolve("zoo.cfg"), lines);
  }

  private Process start(int m) {
    Path dir = dataDir.resolve("member-" + m);
    List<String> java =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Xmx256m",
            "-XX:+UseSerialGC",
            "-Dlogback.configurationFile=" + dataDir.resolve("logback.xml"),
            "-cp",
            Torture.classpath(),
            "org.apache.zookeeper.server.quorum.QuorumPeerMain",
            dir.resolve("zoo.cfg").toString());
    try {
      return new ProcessBuilder(network.inHost(m, java))
          .redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("member.log").toFile()))
          .start();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot start ZooKeeper member " + m, e);
    }
  }

  private void stop(int m) {
    Process p = members[m];
    if (p == null) {
      return;
    }
    // ip netns exec runs the JVM in its own process: kill the JVM, not only the wrapper.
    p.descendants().forEach(ProcessHandle::destroyForcibly);
    p.destroyForcibly();
    try {
      p.waitFor(10, TimeUnit.SECONDS);
      p.descendants().forEach(d -> d.onExit().orTimeout(10, TimeUnit.SECONDS).join());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (RuntimeException e) {
      // a member that would not end: the namespace goes anyway
    }
    members[m] = null;
  }
}
