package io.dlock.torture;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ClassDataArchiveTest {

  @Test
  void targetsOfOneClientShareAnArchiveAndTheLedgersHaveTheirOwn() {
    assertThat(ClassDataArchive.family("redis-owner-id")).isEqualTo("redis");
    assertThat(ClassDataArchive.family("redis")).isEqualTo("redis");
    assertThat(ClassDataArchive.family("mysql-row")).isEqualTo("mysql");
    assertThat(ClassDataArchive.family("mariadb-row")).isEqualTo("mariadb");
    assertThat(ClassDataArchive.family("idempotency-redis")).isEqualTo("idempotency-redis");
  }

  @Test
  void theFirstWorkerOfAFamilyRecordsTheArchiveOfItsFamily(@TempDir Path dir) {
    assertThat(ClassDataArchive.options(dir, "postgres-row"))
        .containsExactly("-XX:ArchiveClassesAtExit=" + dir.resolve("postgres-worker.jsa"));
    assertThat(ClassDataArchive.options(dir, "zookeeper"))
        .containsExactly("-XX:ArchiveClassesAtExit=" + dir.resolve("zookeeper-worker.jsa"));
  }
}
