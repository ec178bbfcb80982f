package io.dlock.torture;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A target over another's servers: its servers, client settings, restarts and close are the wrapped
 * target's; a subclass changes how workers use them (owner ids, a negative control).
 */
abstract class ForwardingTarget implements Target {
  final Target base;

  ForwardingTarget(Target base) {
    this.base = base;
  }

  @Override
  public List<InetSocketAddress> servers() {
    return base.servers();
  }

  @Override
  public String uri(List<Integer> ports) {
    return base.uri(ports);
  }

  @Override
  public Map<String, String> properties(Duration lease) {
    return base.properties(lease);
  }

  @Override
  public Duration holdAfterDeath(Duration lease) {
    return base.holdAfterDeath(lease);
  }

  @Override
  public Optional<Duration> perCallBound() {
    return base.perCallBound();
  }

  @Override
  public void restart() {
    base.restart();
  }

  @Override
  public String restartDescription() {
    return base.restartDescription();
  }

  @Override
  public void close() {
    base.close();
  }
}
