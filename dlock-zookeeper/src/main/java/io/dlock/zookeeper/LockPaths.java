package io.dlock.zookeeper;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The znode layout: {@code <root>/<encoded lock name>/<protection>-lock-<owner key>-<sequence>}.
 *
 * <p>The lock name is percent-encoded into one path segment, so that any valid lock name (slashes,
 * dots, spaces, any Unicode) maps to exactly one parent. The owner key is a hash of the owner
 * token, so that the node of an owner can be found among the children by its name alone (needed
 * after a create whose answer was lost, and for an owner id shared by several clients) without
 * putting the token itself, which may be a secret, into a name every client can list.
 */
final class LockPaths {
  static final String NODE_MARKER = "lock-";
  private static final int SEQUENCE_DIGITS = 10;
  private static final Base64.Encoder BASE64 = Base64.getUrlEncoder().withoutPadding();

  private final String root;

  LockPaths(String root) {
    this.root = root;
  }

  String root() {
    return root;
  }

  /** The parent node of {@code lockName}'s queue. */
  String lockPath(String lockName) {
    return root + "/" + encode(lockName);
  }

  /**
   * The path prefix a new queue node of {@code ownerKey} is created with (ZooKeeper appends the
   * sequence).
   */
  String nodePrefix(String lockName, String ownerKey) {
    return lockPath(lockName) + "/" + NODE_MARKER + ownerKey + "-";
  }

  static String encode(String lockName) {
    byte[] bytes = lockName.getBytes(StandardCharsets.UTF_8);
    StringBuilder out = new StringBuilder(bytes.length);
    for (byte b : bytes) {
      int c = b & 0xff;
      boolean plain =
          (c >= 'a' && c <= 'z')
              || (c >= 'A' && c <= 'Z')
              || (c >= '0' && c <= '9')
              || c == '-'
              || c == '_'
              || c == ':';
      if (plain) {
        out.append((char) c);
      } else {
        out.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)));
        out.append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
      }
    }
    return out.toString();
  }

  /** 128 bits of SHA-256 of the owner token, URL-safe base64: 22 characters. */
  static String ownerKey(String owner) {
    try {
      byte[] digest =
          MessageDigest.getInstance("SHA-256").digest(owner.getBytes(StandardCharsets.UTF_8));
      byte[] key = new byte[16];
      System.arraycopy(digest, 0, key, 0, key.length);
      return BASE64.encodeToString(key);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is part of every Java platform", e);
    }
  }

  /** The owner key in a queue node's name, or null if the name is not a queue node's. */
  static @Nullable String ownerKeyOf(String nodeName) {
    int marker = nodeName.lastIndexOf(NODE_MARKER);
    int end = nodeName.length() - SEQUENCE_DIGITS - 1;
    if (marker < 0 || end <= marker + NODE_MARKER.length() || nodeName.charAt(end) != '-') {
      return null;
    }
    return nodeName.substring(marker + NODE_MARKER.length(), end);
  }

  /** Queue nodes among {@code children}, in queue order (by ZooKeeper's sequence suffix). */
  static List<String> queueOrder(List<String> children) {
    List<String> nodes = new ArrayList<>(children.size());
    for (String child : children) {
      if (isQueueNode(child)) {
        nodes.add(child);
      }
    }
    nodes.sort(Comparator.comparing(LockPaths::sequence));
    return nodes;
  }

  private static boolean isQueueNode(String name) {
    if (name.length() <= SEQUENCE_DIGITS || !name.contains(NODE_MARKER)) {
      return false;
    }
    for (int i = name.length() - SEQUENCE_DIGITS; i < name.length(); i++) {
      if (!Character.isDigit(name.charAt(i))) {
        return false;
      }
    }
    return true;
  }

  private static String sequence(String name) {
    return name.substring(name.length() - SEQUENCE_DIGITS);
  }

  /**
   * The lock name encoded in one path segment by {@link #encode}, or null if {@code segment} is not
   * such an encoding (a foreign node under the root).
   */
  static @Nullable String decode(String segment) {
    java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream(segment.length());
    for (int i = 0; i < segment.length(); i++) {
      char c = segment.charAt(i);
      if (c == '%') {
        if (i + 2 >= segment.length()) {
          return null;
        }
        int hi = Character.digit(segment.charAt(i + 1), 16);
        int lo = Character.digit(segment.charAt(i + 2), 16);
        if (hi < 0 || lo < 0) {
          return null;
        }
        bytes.write((hi << 4) | lo);
        i += 2;
      } else if (c < 0x80) {
        bytes.write(c);
      } else {
        return null;
      }
    }
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .decode(java.nio.ByteBuffer.wrap(bytes.toByteArray()))
          .toString();
    } catch (java.nio.charset.CharacterCodingException e) {
      return null;
    }
  }

  /**
   * The description part of a new node's data: {@code <grant time in epoch millis>|<holder>}. The
   * holder description never contains {@code |} (see {@link io.dlock.spi.HolderDescription}).
   */
  static String description(long epochMillis, String holder) {
    return epochMillis + "|" + holder;
  }

  /**
   * The node's data: {@code <hold count>|<epoch millis>|<holder>}. The owner is known by the owner
   * key in the name (a 128-bit hash), so the token itself is stored nowhere other clients could
   * read it.
   *
   * @param description {@link #description}, or empty
   */
  static byte[] data(int holdCount, String description) {
    String count = Integer.toString(holdCount);
    return (description.isEmpty() ? count : count + "|" + description)
        .getBytes(StandardCharsets.UTF_8);
  }

  /**
   * A node's data, parsed.
   *
   * @param holds the hold count (1 if unreadable)
   * @param epochMillis when the node was created, by its creator's clock, or -1 if unknown
   * @param holder the holder description, or {@code unknown}
   * @param description the part after the hold count, to keep when the count changes
   */
  record NodeData(int holds, long epochMillis, String holder, String description) {
    static NodeData parse(byte @Nullable [] data) {
      if (data == null || data.length == 0) {
        return new NodeData(1, -1, "unknown", "");
      }
      String text = new String(data, StandardCharsets.UTF_8);
      int bar = text.indexOf('|');
      String count = bar < 0 ? text : text.substring(0, bar);
      String description = bar < 0 ? "" : text.substring(bar + 1);
      int holds;
      try {
        holds = Math.max(1, Integer.parseInt(count.trim()));
      } catch (NumberFormatException e) {
        holds = 1;
      }
      long millis = -1;
      String holder = "unknown";
      int second = description.indexOf('|');
      if (second > 0) {
        try {
          millis = Long.parseLong(description.substring(0, second));
          holder = description.substring(second + 1);
        } catch (NumberFormatException e) {
          millis = -1;
        }
      }
      return new NodeData(holds, millis, holder, description);
    }
  }
}
