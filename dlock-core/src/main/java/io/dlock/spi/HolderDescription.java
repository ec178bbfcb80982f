package io.dlock.spi;

import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * Who is acquiring, as backends record it for inspection: {@code host/pid/thread}, or {@code owner
 * id <id>} for an owner id. Never contains {@code |} or control characters, so backends can store
 * it in delimited values.
 */
public final class HolderDescription {
  private static final String PROCESS = hostName() + "/" + ProcessHandle.current().pid();

  private HolderDescription() {}

  /** The description of the calling thread acquiring for {@code owner}. */
  public static String of(LockOwner owner) {
    String id = owner.ownerId();
    String text = id != null ? "owner id " + id : PROCESS + "/" + Thread.currentThread().getName();
    return clean(text);
  }

  private static String clean(String text) {
    StringBuilder out = new StringBuilder(Math.min(text.length(), 200));
    for (int i = 0; i < text.length() && out.length() < 200; i++) {
      char c = text.charAt(i);
      out.append(c == '|' || Character.isISOControl(c) ? '_' : c);
    }
    return out.toString();
  }

  private static String hostName() {
    String env = System.getenv("HOSTNAME");
    if (env != null && !env.isBlank()) {
      return env;
    }
    try {
      return InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      return ManagementFactory.getRuntimeMXBean().getName();
    }
  }
}
