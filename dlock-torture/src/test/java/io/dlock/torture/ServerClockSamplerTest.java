package io.dlock.torture;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the sampler of a server's clock calls a step, on made-up readings. */
class ServerClockSamplerTest {
  private static final long MS = 1_000_000L;
  private static final long EPOCH_MS = 1_796_000_000_000L;

  @TempDir Path dir;

  private ServerClockSampler sampler() {
    ServerClock never =
        new ServerClock() {
          @Override
          public long millis() {
            throw new IllegalStateException("the test records its own readings");
          }

          @Override
          public String description() {
            return "test clock";
          }

          @Override
          public void close() {}
        };
    return ServerClockSampler.forTest(never, dir);
  }

  @Test
  void aClockThatRunsTrueShowsNoStep_evenWithSlowAnswers() {
    ServerClockSampler s = sampler();
    for (int i = 0; i < 40; i++) {
      long before = i * 250 * MS;
      // Answers that take up to 300 ms: the server read its clock somewhere in between.
      long slow = (i % 3) * 150 * MS;
      long seenAt = before + (i % 2 == 0 ? 0 : slow);
      s.record(before, EPOCH_MS + seenAt / MS, before + slow);
    }
    assertThat(s.stepped()).isFalse();
    assertThat(s.summary()).contains("40 readings").contains("no step over 100 ms");
  }

  @Test
  void aWallClockSetForwardBy1600MsIsAStep_atItsTime() {
    ServerClockSampler s = sampler();
    for (int i = 0; i < 20; i++) {
      long at = i * 250 * MS;
      long jump = i >= 12 ? 1_600 : 0;
      s.record(at, EPOCH_MS + at / MS + jump, at + 2 * MS);
    }
    assertThat(s.stepped()).isTrue();
    assertThat(s.summary()).contains("**steps**: +1600 ms at").contains("+0..+1600 ms");
  }

  @Test
  void aTargetWithoutAWallClockOfItsServerHasNoSampler() {
    assertThat(ServerClock.of(new ZooKeeperLikeTarget())).isEqualTo(Optional.empty());
  }

  /** A target whose URI names no server whose clock judges leases. */
  private static final class ZooKeeperLikeTarget implements Target {
    @Override
    public String name() {
      return "zookeeper";
    }

    @Override
    public java.util.List<java.net.InetSocketAddress> servers() {
      return java.util.List.of(new java.net.InetSocketAddress("127.0.0.1", 2181));
    }

    @Override
    public String uri(java.util.List<Integer> ports) {
      return "zookeeper://127.0.0.1:" + ports.get(0);
    }

    @Override
    public java.util.Map<String, String> properties(java.time.Duration lease) {
      return java.util.Map.of();
    }

    @Override
    public java.time.Duration holdAfterDeath(java.time.Duration lease) {
      return lease;
    }

    @Override
    public void restart() {}

    @Override
    public String restartDescription() {
      return "";
    }

    @Override
    public void close() {}
  }
}
