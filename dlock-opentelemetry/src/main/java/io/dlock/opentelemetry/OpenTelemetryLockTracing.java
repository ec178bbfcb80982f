package io.dlock.opentelemetry;

import io.dlock.LeaseLostEvent;
import io.dlock.LockEventListener;
import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.common.Attributes;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Context;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * OpenTelemetry spans for every lock of a client: a {@link LockEventListener} to set with {@link
 * io.dlock.LockClientOptions#withEventListener}. Any client, made by any means.
 *
 * <ul>
 *   <li>{@value #WAIT_SPAN}: one per acquisition that waited for another holder, from the start of
 *       the wait to its end, with the outcome ({@value #OUTCOME}: {@code acquired}, {@code
 *       timeout}, {@code backend_unavailable}, {@code interrupted}, {@code lease_lost}, {@code
 *       error}) and, when acquired, the fencing token; status error unless acquired or timed out.
 *   <li>{@value #HOLD_SPAN}: one per hold, from the grant to its confirmed release. A lost lease
 *       adds the event {@value #LOST_EVENT} (reason and detail) to each open hold span of the
 *       grant, sets their status to error and ends them: the holder's release, if any, then finds
 *       nothing.
 * </ul>
 *
 * <p>Both are children of the span current on the thread that reports the event: for a blocking
 * acquisition, the caller's (an HTTP request's, a job's), so a trace shows where it waited for
 * which lock and for how long it held it. An asynchronous acquisition completes on a thread of the
 * client's, where no caller context is current; its spans are then roots. Attributes: {@value
 * #LOCK_NAME} (the full name: attributes are not metric tags, a key in it is fine) and {@value
 * #FENCING_TOKEN}.
 */
public final class OpenTelemetryLockTracing implements LockEventListener {
  /** The instrumentation scope: this module. */
  public static final String SCOPE = "io.dlock";

  public static final String WAIT_SPAN = "dlock.lock.wait";
  public static final String HOLD_SPAN = "dlock.lock.hold";
  public static final String LOST_EVENT = "dlock.lease.lost";
  public static final String LOCK_NAME = "dlock.lock.name";
  public static final String FENCING_TOKEN = "dlock.fencing_token";
  public static final String OUTCOME = "dlock.outcome";
  public static final String LOST_REASON = "dlock.lost.reason";
  public static final String LOST_DETAIL = "dlock.lost.detail";

  private static final AttributeKey<String> LOCK_NAME_KEY = AttributeKey.stringKey(LOCK_NAME);
  private static final AttributeKey<Long> TOKEN_KEY = AttributeKey.longKey(FENCING_TOKEN);
  private static final AttributeKey<String> OUTCOME_KEY = AttributeKey.stringKey(OUTCOME);
  private static final AttributeKey<String> REASON_KEY = AttributeKey.stringKey(LOST_REASON);
  private static final AttributeKey<String> DETAIL_KEY = AttributeKey.stringKey(LOST_DETAIL);

  /**
   * The wait that just ended on this thread, until its outcome is reported: the core reports {@code
   * waitEnded} and then, on the same thread, {@code acquired} or {@code notAcquired}.
   */
  private static final ThreadLocal<@Nullable EndedWait> endedWait = new ThreadLocal<>();

  private final Tracer tracer;

  /** Open hold spans by grant (lock name and fencing token); re-entries stack up. */
  private final Map<Grant, Deque<Span>> holds = new ConcurrentHashMap<>();

  /** Spans from {@code openTelemetry}'s tracer for {@value #SCOPE}. */
  public OpenTelemetryLockTracing(OpenTelemetry openTelemetry) {
    this(Objects.requireNonNull(openTelemetry, "openTelemetry").getTracer(SCOPE));
  }

  /** Spans from {@code tracer}. */
  public OpenTelemetryLockTracing(Tracer tracer) {
    this.tracer = Objects.requireNonNull(tracer, "tracer");
  }

  private record Grant(String lockName, long fencingToken) {}

  private record EndedWait(String lockName, Instant start, Instant end) {}

  @Override
  public void waitEnded(String lockName, Duration waited) {
    Instant end = Instant.now();
    endedWait.set(new EndedWait(lockName, end.minus(waited), end));
  }

  @Override
  public void acquired(String lockName, long fencingToken, Duration latency, Duration waited) {
    EndedWait wait = takeWait(lockName);
    if (wait != null) {
      Span span = waitSpan(wait);
      span.setAttribute(OUTCOME_KEY, "acquired");
      span.setAttribute(TOKEN_KEY, fencingToken);
      span.end(wait.end());
    }
    Span hold =
        tracer
            .spanBuilder(HOLD_SPAN)
            .setParent(Context.current())
            .setSpanKind(SpanKind.INTERNAL)
            .setAttribute(LOCK_NAME_KEY, lockName)
            .setAttribute(TOKEN_KEY, fencingToken)
            .startSpan();
    // compute: atomic per grant, so a push never lands in a deque that a pop just dropped.
    holds.compute(
        new Grant(lockName, fencingToken),
        (grant, open) -> {
          Deque<Span> spans = open == null ? new ArrayDeque<>() : open;
          spans.push(hold);
          return spans;
        });
  }

  @Override
  public void notAcquired(String lockName, AcquireFailure failure, Duration latency) {
    EndedWait wait = takeWait(lockName);
    if (wait == null) {
      return; // a single attempt, or a failure before any wait: no wait to show
    }
    Span span = waitSpan(wait);
    String outcome = failure.name().toLowerCase(Locale.ROOT);
    span.setAttribute(OUTCOME_KEY, outcome);
    if (failure != AcquireFailure.TIMEOUT) {
      span.setStatus(StatusCode.ERROR, outcome);
    }
    span.end(wait.end());
  }

  @Override
  public void released(String lockName, long fencingToken, Duration held) {
    Span hold = pop(new Grant(lockName, fencingToken));
    if (hold != null) {
      hold.end();
    }
  }

  @Override
  public void lost(LeaseLostEvent event) {
    Deque<Span> open = holds.remove(new Grant(event.lockName(), event.fencingToken()));
    if (open == null) {
      return;
    }
    // Removed from the map, the deque is no longer touched by anyone else.
    List<Span> spans = new ArrayList<>(open);
    String reason = event.reason().name().toLowerCase(Locale.ROOT);
    for (Span span : spans) {
      span.addEvent(
          LOST_EVENT,
          Attributes.of(REASON_KEY, reason, DETAIL_KEY, String.valueOf(event.detail())));
      span.setStatus(StatusCode.ERROR, "lease lost: " + reason);
      span.end();
    }
  }

  /** Hold spans open now (for tests and leak checks). */
  int openHolds() {
    int[] n = {0};
    holds.forEach(
        (grant, open) ->
            holds.computeIfPresent(
                grant,
                (g, d) -> {
                  n[0] += d.size();
                  return d;
                }));
    return n[0];
  }

  private Span waitSpan(EndedWait wait) {
    return tracer
        .spanBuilder(WAIT_SPAN)
        .setParent(Context.current())
        .setSpanKind(SpanKind.INTERNAL)
        .setStartTimestamp(wait.start())
        .setAttribute(LOCK_NAME_KEY, wait.lockName())
        .startSpan();
  }

  private static @Nullable EndedWait takeWait(String lockName) {
    EndedWait wait = endedWait.get();
    if (wait == null) {
      return null;
    }
    endedWait.remove();
    return wait.lockName().equals(lockName) ? wait : null;
  }

  private @Nullable Span pop(Grant grant) {
    List<Span> popped = new ArrayList<>(1);
    holds.computeIfPresent(
        grant,
        (g, open) -> {
          Span span = open.poll();
          if (span != null) {
            popped.add(span);
          }
          return open.isEmpty() ? null : open;
        });
    return popped.isEmpty() ? null : popped.get(0);
  }
}
