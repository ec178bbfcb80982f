package io.dlock.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Modifier;
import org.junit.jupiter.api.Test;

/**
 * The flags of a held grant that the heartbeat tick reads without the grant's lock (HeldLockWatch)
 * are volatile: a plain field read there may see a stale value indefinitely (the Java memory model
 * promises nothing without a happens-before edge), and a dead connection would go unchecked. A race
 * of that kind cannot be made to fail on demand, so the declaration is what is checked.
 */
class HeldGrantTest {
  @Test
  void theFlagsTheHeartbeatReadsWithoutTheLockAreVolatile() throws Exception {
    for (String flag : new String[] {"released", "dead", "reported", "renewed", "releasing"}) {
      int modifiers = HeldGrant.class.getDeclaredField(flag).getModifiers();
      assertThat(Modifier.isVolatile(modifiers)).as("HeldGrant.%s is volatile", flag).isTrue();
    }
  }
}
