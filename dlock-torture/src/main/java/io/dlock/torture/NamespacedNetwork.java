package io.dlock.torture;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Hosts made of Linux network namespaces, so that a fault can cut the network between servers, not
 * only between a client and a server. Each host has two links: one to a client network that this
 * process (in the machine's own namespace) reaches, the other to a peer network that only the hosts
 * share. {@link #cutPeerLink} takes a host's peer link down: what it sends to the other hosts and
 * what they send to it is dropped, silently, nothing is reset, as in a real partition; its clients
 * still reach it.
 *
 * <p>Needs root and iproute2 ({@code ip}); {@link #unavailableReason()} says why not. Names carry
 * this process's id ({@code dz<pid>...}), so that a run never touches another's, and a run killed
 * before it could clean up is cleaned up by the next one (its process is gone).
 */
final class NamespacedNetwork implements AutoCloseable {
  private static final Pattern OURS = Pattern.compile("dz(\\d+)h\\d+");
  private final String prefix;
  private final int subnet;
  private final int hosts;
  private final Thread cleanupAtExit = new Thread(this::close, "netns-cleanup");
  private volatile boolean closed;

  /** Creates {@code hosts} namespaces (hosts 1 to {@code hosts}) and both networks. */
  NamespacedNetwork(int hosts) {
    long pid = ProcessHandle.current().pid();
    this.prefix = "dz" + pid;
    this.subnet = (int) (pid % 250) + 1;
    this.hosts = hosts;
    removeLeftoversOfDeadRuns();
    Runtime.getRuntime().addShutdownHook(cleanupAtExit);
    try {
      ip("link", "add", clientBridge(), "type", "bridge");
      ip("addr", "add", "10.211." + subnet + ".1/24", "dev", clientBridge());
      ip("link", "set", clientBridge(), "up");
      ip("link", "add", peerBridge(), "type", "bridge");
      ip("link", "set", peerBridge(), "up");
      for (int h = 1; h <= hosts; h++) {
        ip("netns", "add", namespace(h));
        ip("netns", "exec", namespace(h), "ip", "link", "set", "lo", "up");
        attach(h, "c", clientBridge(), clientAddress(h));
        attach(h, "p", peerBridge(), peerAddress(h));
      }
    } catch (RuntimeException e) {
      close();
      throw e;
    }
  }

  /**
   * Why hosts cannot be made here (not root, no {@code ip}, namespaces refused), or empty if they
   * can: the probe makes a namespace and removes it.
   */
  static Optional<String> unavailableReason() {
    String probe = "dz" + ProcessHandle.current().pid() + "probe";
    try {
      run(List.of("ip", "netns", "add", probe));
      run(List.of("ip", "netns", "del", probe));
      return Optional.empty();
    } catch (RuntimeException e) {
      return Optional.of(
          "network namespaces cannot be made here (they need root and iproute2): "
              + e.getMessage());
    }
  }

  /** Where this process reaches host {@code h}. */
  String clientAddress(int h) {
    return "10.211." + subnet + "." + (10 + h);
  }

  /** Where the other hosts reach host {@code h}. */
  String peerAddress(int h) {
    return "10.212." + subnet + "." + (10 + h);
  }

  /** {@code command}, to be run inside host {@code h}'s namespace. */
  List<String> inHost(int h, List<String> command) {
    List<String> wrapped = new ArrayList<>(List.of("ip", "netns", "exec", namespace(h)));
    wrapped.addAll(command);
    return wrapped;
  }

  /** Cuts host {@code h} off from the other hosts (not from its clients) until healed. */
  void cutPeerLink(int h) {
    ip("link", "set", link(h, "p"), "down");
  }

  void healPeerLink(int h) {
    ip("link", "set", link(h, "p"), "up");
  }

  /**
   * Removes the namespaces (with their links) and both bridges; processes inside are the caller's.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (int h = 1; h <= hosts; h++) {
      quietly("netns", "del", namespace(h));
      quietly("link", "del", link(h, "c"));
      quietly("link", "del", link(h, "p"));
    }
    quietly("link", "del", clientBridge());
    quietly("link", "del", peerBridge());
    try {
      Runtime.getRuntime().removeShutdownHook(cleanupAtExit);
    } catch (IllegalStateException e) {
      // closing from the hook itself, as the JVM ends
    }
  }

  private void attach(int h, String network, String bridge, String address) {
    String outside = link(h, network);
    String inside = outside + "n";
    ip("link", "add", outside, "type", "veth", "peer", "name", inside);
    ip("link", "set", inside, "netns", namespace(h));
    ip("link", "set", outside, "master", bridge);
    ip("link", "set", outside, "up");
    ip("netns", "exec", namespace(h), "ip", "addr", "add", address + "/24", "dev", inside);
    ip("netns", "exec", namespace(h), "ip", "link", "set", inside, "up");
  }

  private String namespace(int h) {
    return prefix + "h" + h;
  }

  /** The link's end in this process's namespace: {@code dz<pid>c<h>} or {@code dz<pid>p<h>}. */
  private String link(int h, String network) {
    return prefix + network + h;
  }

  private String clientBridge() {
    return prefix + "cb";
  }

  private String peerBridge() {
    return prefix + "pb";
  }

  /** Namespaces and links of runs whose process is gone (killed before it could clean up). */
  private static void removeLeftoversOfDeadRuns() {
    String namespaces;
    try {
      namespaces = run(List.of("ip", "netns", "list"));
    } catch (RuntimeException e) {
      return;
    }
    for (String line : namespaces.split("\n")) {
      Matcher m = OURS.matcher(line.trim().split(" ")[0]);
      if (!m.matches() || ProcessHandle.of(Long.parseLong(m.group(1))).isPresent()) {
        continue;
      }
      String dead = "dz" + m.group(1);
      quietly("netns", "del", m.group(0));
      for (String suffix : new String[] {"cb", "pb", "c1", "c2", "c3", "p1", "p2", "p3"}) {
        quietly("link", "del", dead + suffix);
      }
    }
  }

  private static void ip(String... args) {
    List<String> command = new ArrayList<>(List.of("ip"));
    command.addAll(List.of(args));
    run(command);
  }

  private static void quietly(String... args) {
    try {
      ip(args);
    } catch (RuntimeException e) {
      // already gone
    }
  }

  private static String run(List<String> command) {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IllegalStateException(String.join(" ", command) + " did not end in 30 s");
      }
      if (p.exitValue() != 0) {
        throw new IllegalStateException(
            String.join(" ", command) + " failed (" + p.exitValue() + "): " + output.trim());
      }
      return output;
    } catch (IOException e) {
      throw new IllegalStateException(String.join(" ", command) + " could not run: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(String.join(" ", command) + " interrupted", e);
    }
  }
}
