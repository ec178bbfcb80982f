package io.dlock.core;

import static org.assertj.core.api.Assertions.assertThat;

import io.dlock.spi.LockOwner;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class OwnerTokensTest {

  @Test
  void aGrantOwnerKeptAsBitsRendersBackToTheSameKey() {
    Set<String> keys = new HashSet<>();
    for (int i = 0; i < 1_000; i++) {
      LockOwner owner = OwnerTokens.next();
      long[] bits = OwnerTokens.bitsOf(owner);
      assertThat(bits).isNotNull().hasSize(2);
      assertThat(OwnerTokens.ofBits(bits[0], bits[1])).isEqualTo(owner);
      keys.add(owner.key());
    }
    assertThat(keys).as("1,000 random owners, all distinct").hasSize(1_000);
  }

  @Test
  void ownersItDidNotMakeAreKeptAsTheyAre() {
    assertThat(OwnerTokens.bitsOf(LockOwner.ofOwnerId("billing"))).isNull();
    assertThat(OwnerTokens.bitsOf(LockOwner.ofGrant("short"))).isNull();
    assertThat(OwnerTokens.bitsOf(LockOwner.ofGrant("not base64 at all, but 22!"))).isNull();
    // 22 Base64 characters whose last one carries bits beyond the 128: decodes, but would render
    // differently, so it must be kept as it is.
    assertThat(OwnerTokens.bitsOf(LockOwner.ofGrant("AAAAAAAAAAAAAAAAAAAAAB"))).isNull();
    assertThat(OwnerTokens.bitsOf(LockOwner.ofGrant("AAAAAAAAAAAAAAAAAAAAAA"))).isNotNull();
  }
}
