package io.dlock.spring;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Lock names back to their patterns: the bounded {@code lock} tag of the metrics. */
class LockNamePatternsTest {
  private final LockNamePatterns names = new LockNamePatterns("svc:");

  @Test
  void namesAreBuiltWithThePrefixAndTheKey() {
    assertThat(names.lockName("stock", "sku-42")).isEqualTo("svc:stock:sku-42");
    assertThat(names.lockName("nightly-report", null)).isEqualTo("svc:nightly-report");
  }

  @Test
  void everyKeyOfAPatternMapsToThePattern() {
    names.lockName("stock", "sku-1");
    assertThat(names.patternOf("svc:stock:sku-1")).isEqualTo("stock");
    assertThat(names.patternOf("svc:stock:sku-2")).isEqualTo("stock");
    // Keys may contain the separator.
    assertThat(names.patternOf("svc:stock:eu:sku-3")).isEqualTo("stock");
  }

  @Test
  void aPatternWithoutKeyMapsOnlyItsOwnName() {
    names.lockName("nightly-report", null);
    assertThat(names.patternOf("svc:nightly-report")).isEqualTo("nightly-report");
    assertThat(names.patternOf("svc:nightly-report:2")).isEqualTo(LockNamePatterns.OTHER);
  }

  @Test
  void namesTheStarterDidNotBuildAreOther() {
    assertThat(names.patternOf("svc:stock:sku-1")).isEqualTo(LockNamePatterns.OTHER);
    names.lockName("stock", "sku-1");
    assertThat(names.patternOf("stock:sku-1")).isEqualTo(LockNamePatterns.OTHER);
    assertThat(names.patternOf("svc:stock")).isEqualTo(LockNamePatterns.OTHER);
    assertThat(names.patternOf("svc:stockpile:1")).isEqualTo(LockNamePatterns.OTHER);
    assertThat(names.patternOf(":")).isEqualTo(LockNamePatterns.OTHER);
    assertThat(names.patternOf("")).isEqualTo(LockNamePatterns.OTHER);
  }

  @Test
  void theMostSpecificPatternWins() {
    names.lockName("stock", "x");
    names.lockName("stock:reserve", "x");
    names.lockName("stock:audit", null);
    assertThat(names.patternOf("svc:stock:reserve:sku-1")).isEqualTo("stock:reserve");
    assertThat(names.patternOf("svc:stock:sku-1")).isEqualTo("stock");
    // A name without key is exactly what it is, not the key "audit" of "stock".
    assertThat(names.patternOf("svc:stock:audit")).isEqualTo("stock:audit");
  }
}
