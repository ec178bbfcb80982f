package io.dlock.zookeeper;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The znode layout of semaphores: {@code <root>/.semaphores/<encoded name>}, a container whose
 * children are the semaphore's waiters and holders side by side:
 *
 * <ul>
 *   <li>{@code q-<owner key>-<count>-<sequence>}: a waiter (ephemeral sequential), in queue order
 *       by the sequence;
 *   <li>{@code h-<owner key>-<count>}: a holder (ephemeral), its data the grant time and holder
 *       description ({@link LockPaths#data}), its creation zxid the grant's fencing token.
 * </ul>
 *
 * <p>Why one parent for both: the head turns its waiter node into a holder node in one transaction
 * that also bumps the parent's data version (the guard against a concurrent grant) and deletes its
 * waiter node. While that waiter node exists the parent cannot be reaped, so a version read with
 * the listing can never belong to an earlier incarnation of the parent (no ABA on the guard). And
 * the count is in the names, so one listing tells the head both its place and the permits held.
 *
 * <p>Why {@code .semaphores}: {@link LockPaths#encode} never writes a raw {@code .}, so no lock's
 * node can have this name, and a lock named {@code .semaphores} is encoded as {@code
 * %2Esemaphores}: the two namespaces never meet. The owner key is {@link LockPaths#ownerKey} (a
 * hash, 22 characters), never the token itself.
 */
final class PermitPaths {
  static final String SEMAPHORES = ".semaphores";
  private static final String HOLDER = "h-";
  private static final String WAITER = "q-";
  private static final int KEY_LENGTH = 22;
  private static final int SEQUENCE_DIGITS = 10;

  private final String root;

  PermitPaths(String lockRoot) {
    this.root = lockRoot + "/" + SEMAPHORES;
  }

  /** The parent of the semaphores. */
  String root() {
    return root;
  }

  /** The parent node of {@code semaphore}'s waiters and holders. */
  String semaphorePath(String semaphore) {
    return root + "/" + LockPaths.encode(semaphore);
  }

  /** A holder node's name. */
  static String holderName(String ownerKey, int count) {
    return HOLDER + ownerKey + "-" + count;
  }

  /** The prefix of a waiter node's path (ZooKeeper appends the sequence). */
  static String waiterPrefix(String parent, String ownerKey, int count) {
    return parent + "/" + WAITER + ownerKey + "-" + count + "-";
  }

  /** A holder node, parsed from its name. */
  record Holder(String name, String ownerKey, int count) {}

  /** A waiter node, parsed from its name. */
  record Waiter(String name, String ownerKey, int count, String sequence) {}

  /** The holder named {@code name}, or null if it is no holder's name. */
  static @Nullable Holder holder(String name) {
    if (!name.startsWith(HOLDER) || name.length() < HOLDER.length() + KEY_LENGTH + 2) {
      return null;
    }
    int keyEnd = HOLDER.length() + KEY_LENGTH;
    if (name.charAt(keyEnd) != '-') {
      return null;
    }
    int count = parseCount(name.substring(keyEnd + 1));
    return count > 0 ? new Holder(name, name.substring(HOLDER.length(), keyEnd), count) : null;
  }

  /** The waiter named {@code name}, or null if it is no waiter's name. */
  static @Nullable Waiter waiter(String name) {
    int keyEnd = WAITER.length() + KEY_LENGTH;
    int sequenceStart = name.length() - SEQUENCE_DIGITS;
    if (!name.startsWith(WAITER)
        || sequenceStart <= keyEnd + 2
        || name.charAt(keyEnd) != '-'
        || name.charAt(sequenceStart - 1) != '-') {
      return null;
    }
    String sequence = name.substring(sequenceStart);
    if (!sequence.chars().allMatch(Character::isDigit)) {
      return null;
    }
    int count = parseCount(name.substring(keyEnd + 1, sequenceStart - 1));
    return count > 0
        ? new Waiter(name, name.substring(WAITER.length(), keyEnd), count, sequence)
        : null;
  }

  /** The holders among {@code children}. */
  static List<Holder> holders(List<String> children) {
    List<Holder> holders = new ArrayList<>();
    for (String child : children) {
      Holder holder = holder(child);
      if (holder != null) {
        holders.add(holder);
      }
    }
    return holders;
  }

  /** The waiters among {@code children}, in queue order. */
  static List<Waiter> queue(List<String> children) {
    List<Waiter> waiters = new ArrayList<>();
    for (String child : children) {
      Waiter waiter = waiter(child);
      if (waiter != null) {
        waiters.add(waiter);
      }
    }
    waiters.sort(Comparator.comparing(Waiter::sequence));
    return waiters;
  }

  private static int parseCount(String text) {
    if (text.isEmpty() || text.length() > 9 || !text.chars().allMatch(Character::isDigit)) {
      return -1;
    }
    return Integer.parseInt(text);
  }
}
