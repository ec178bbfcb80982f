package io.dlock.opentelemetry;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.dlock.Lease;
import io.dlock.LockClient;
import io.dlock.LockClientOptions;
import io.dlock.LockClients;
import io.dlock.LockEventListener;
import io.dlock.LockOptions;
import io.dlock.LockTimeoutException;
import io.dlock.testkit.InMemoryLockBackend;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.opentelemetry.context.Scope;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The spans of a known sequence of waits, holds and losses, exported by the SDK's in-memory
 * exporter, on a client made without Spring over the in-memory backend.
 */
class OpenTelemetryLockTracingTest {
  private static final Duration AWAIT = Duration.ofSeconds(10);
  private static final AttributeKey<String> LOCK = AttributeKey.stringKey("dlock.lock.name");
  private static final AttributeKey<Long> TOKEN = AttributeKey.longKey("dlock.fencing_token");
  private static final AttributeKey<String> OUTCOME = AttributeKey.stringKey("dlock.outcome");
  private static final AttributeKey<String> REASON = AttributeKey.stringKey("dlock.lost.reason");

  private final InMemorySpanExporter exported = InMemorySpanExporter.create();
  private final SdkTracerProvider provider =
      SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exported)).build();
  private final Tracer tracer = provider.get("test");
  private final OpenTelemetryLockTracing tracing =
      new OpenTelemetryLockTracing(provider.get(OpenTelemetryLockTracing.SCOPE));
  private final InMemoryLockBackend server = new InMemoryLockBackend();

  /** Counted down when an acquisition of the client starts to wait. */
  private final CountDownLatch waitStarted = new CountDownLatch(1);

  private final LockClient client =
      LockClients.create(
          server,
          LockClientOptions.defaults()
              .withEventListener(
                  LockEventListener.allOf(
                      tracing,
                      new LockEventListener() {
                        @Override
                        public void waiting(String lockName) {
                          waitStarted.countDown();
                        }
                      })));

  /** Another process on the same server, not traced. */
  private final LockClient other =
      LockClients.create(server.sharedView(), LockClientOptions.defaults());

  @AfterEach
  void close() {
    client.close();
    other.close();
    provider.close();
  }

  @Test
  void aHoldIsASpanUnderTheCallersSpanFromGrantToRelease() {
    Span request = tracer.spanBuilder("request").startSpan();
    long token;
    try (Scope ignored = request.makeCurrent()) {
      Lease outer = client.lock("stock:sku-1").tryAcquire().orElseThrow();
      Lease reentry = client.lock("stock:sku-1").tryAcquire().orElseThrow();
      token = outer.fencingToken();
      reentry.release();
      outer.release();
    } finally {
      request.end();
    }

    List<SpanData> spans = exported.getFinishedSpanItems();
    // Ended in order: the re-entry's hold, the outer hold, then the request.
    assertThat(spans)
        .extracting(SpanData::getName)
        .containsExactly("dlock.lock.hold", "dlock.lock.hold", "request");
    SpanData parent = spans.get(2);
    for (SpanData hold : spans.subList(0, 2)) {
      assertThat(hold.getParentSpanId()).isEqualTo(parent.getSpanId());
      assertThat(hold.getTraceId()).isEqualTo(parent.getTraceId());
      assertThat(hold.getAttributes().get(LOCK)).isEqualTo("stock:sku-1");
      assertThat(hold.getAttributes().get(TOKEN)).isEqualTo(token);
      assertThat(hold.getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
    }
    // The outer hold began first and ended last.
    assertThat(spans.get(1).getStartEpochNanos())
        .isLessThanOrEqualTo(spans.get(0).getStartEpochNanos());
    assertThat(tracing.openHolds()).isZero();
  }

  @Test
  void aWaitIsASpanWithItsOutcomeAndTheTokenItGot() throws Exception {
    Lease held = other.lock("stock:sku-2").tryAcquire().orElseThrow();
    Span request = tracer.spanBuilder("request").startSpan();
    Thread buyer =
        new Thread(
            () -> {
              try (Scope ignored = request.makeCurrent()) {
                client.lock("stock:sku-2").acquire(AWAIT).release();
              }
            });
    buyer.start();
    assertThat(waitStarted.await(AWAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
    held.release();
    buyer.join(AWAIT.toMillis());
    request.end();

    List<SpanData> spans = exported.getFinishedSpanItems();
    assertThat(spans)
        .extracting(SpanData::getName)
        .containsExactly("dlock.lock.wait", "dlock.lock.hold", "request");
    SpanData wait = spans.get(0);
    SpanData hold = spans.get(1);
    assertThat(wait.getParentSpanId()).isEqualTo(spans.get(2).getSpanId());
    assertThat(wait.getAttributes().get(OUTCOME)).isEqualTo("acquired");
    assertThat(wait.getAttributes().get(TOKEN)).isEqualTo(hold.getAttributes().get(TOKEN));
    assertThat(wait.getEndEpochNanos()).isGreaterThan(wait.getStartEpochNanos());
    assertThat(wait.getEndEpochNanos()).isLessThanOrEqualTo(hold.getStartEpochNanos());
  }

  @Test
  void aWaitThatTimesOutIsASpanWithThatOutcomeAndNoHold() {
    Lease held = other.lock("stock:sku-3").tryAcquire().orElseThrow();

    assertThatThrownBy(() -> client.lock("stock:sku-3").acquire(Duration.ofMillis(50)))
        .isInstanceOf(LockTimeoutException.class);
    assertThat(client.lock("stock:sku-3").tryAcquire()).isEmpty(); // one attempt: no wait span
    held.release();

    List<SpanData> spans = exported.getFinishedSpanItems();
    assertThat(spans).extracting(SpanData::getName).containsExactly("dlock.lock.wait");
    assertThat(spans.get(0).getAttributes().get(OUTCOME)).isEqualTo("timeout");
    assertThat(spans.get(0).getAttributes().get(TOKEN)).isNull();
    assertThat(spans.get(0).getStatus().getStatusCode()).isEqualTo(StatusCode.UNSET);
  }

  @Test
  void aLostLeaseIsAnEventOnItsHoldSpanWhichEndsInError() {
    Lease lease =
        client
            .lock("stock:sku-4", LockOptions.defaults().withRenewedLease(Duration.ofMillis(300)))
            .tryAcquire()
            .orElseThrow();

    server.delete("stock:sku-4"); // behind the holder's back: its next renewal finds it gone

    await().atMost(AWAIT).until(() -> exported.getFinishedSpanItems().size() == 1);
    SpanData hold = exported.getFinishedSpanItems().get(0);
    assertThat(hold.getName()).isEqualTo("dlock.lock.hold");
    assertThat(hold.getStatus().getStatusCode()).isEqualTo(StatusCode.ERROR);
    assertThat(hold.getEvents()).extracting(EventData::getName).containsExactly("dlock.lease.lost");
    assertThat(hold.getEvents().get(0).getAttributes().get(REASON)).isEqualTo("taken_over");
    lease.release(); // finds the lease lost: nothing more is exported
    assertThat(exported.getFinishedSpanItems()).hasSize(1);
    assertThat(tracing.openHolds()).isZero();
  }
}
