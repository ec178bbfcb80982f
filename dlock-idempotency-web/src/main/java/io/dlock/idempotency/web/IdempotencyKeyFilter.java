package io.dlock.idempotency.web;

import io.dlock.idempotency.ClaimOutcome;
import io.dlock.idempotency.DedupClaim;
import io.dlock.idempotency.DedupRecords;
import io.dlock.idempotency.IdempotencyStoreException;
import io.dlock.idempotency.Tokens;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import org.springframework.web.filter.OncePerRequestFilter;
import org.springframework.web.util.ContentCachingResponseWrapper;

/**
 * The {@code Idempotency-Key} header (IETF httpapi draft "The Idempotency-Key HTTP Header Field",
 * as Stripe uses it) for Spring MVC. For a request on a handled method (POST and PATCH by default)
 * that carries the header:
 *
 * <ul>
 *   <li>the first request runs, and its response (status, {@code Content-Type}, {@code Location}
 *       and the other configured headers, body) is stored in a dedup record under the key scoped to
 *       the caller, the method and the path, kept for the records' retention;
 *   <li>a retry with the same key and the same body gets the stored response again, with {@code
 *       Idempotent-Replayed: true}; the handler does not run;
 *   <li>a retry while the first is still running gets 409 Conflict with {@code Retry-After};
 *   <li>the same key with a different body (the fingerprint is the SHA-256 of the body) gets 422
 *       Unprocessable Content;
 *   <li>a key that is empty, longer than 255 characters or not visible ASCII gets 400; a required
 *       key that is missing gets 400; a body over the limit gets 413.
 * </ul>
 *
 * <p>Requests without the header, and other methods, pass through untouched. A response with a 5xx
 * status, or a handler that throws, marks the record failed: the next retry runs the handler again
 * (a server error is worth retrying; a 4xx answer is stored like any other). A server that crashes
 * mid-request leaves an in-progress record that expires after the records' in-progress timeout.
 * Error answers are {@code application/problem+json}.
 *
 * <p>The store is any {@link DedupRecords} (Redis or JDBC). Each HTTP request gets its own request
 * id for the store, and a store call that fails (its reply lost to a reset connection, say) is
 * repeated with that same id, up to {@value #STORE_ATTEMPTS} attempts in all: the store then gives
 * the repeat the outcome of the first call, so a claim that was made is this request's claim, not
 * another's "in progress", and a completion that was stored is not stored twice. If the store still
 * fails, the exception propagates (a 500 from the container): the request is not run unprotected.
 */
public final class IdempotencyKeyFilter extends OncePerRequestFilter {
  /** The header set on replayed responses. */
  public static final String REPLAYED_HEADER = "Idempotent-Replayed";

  private static final int MAX_KEY_LENGTH = 255;
  private static final int STORE_ATTEMPTS = 3;
  private static final long STORE_RETRY_BACKOFF_MILLIS = 50;

  private final DedupRecords records;
  private final IdempotencyKeySettings settings;

  public IdempotencyKeyFilter(DedupRecords records, IdempotencyKeySettings settings) {
    this.records = Objects.requireNonNull(records, "records");
    this.settings = Objects.requireNonNull(settings, "settings");
  }

  @Override
  protected boolean shouldNotFilter(HttpServletRequest request) {
    return !settings.methods().contains(request.getMethod());
  }

  @Override
  protected void doFilterInternal(
      HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws ServletException, IOException {
    String raw = request.getHeader(settings.headerName());
    if (raw == null) {
      if (settings.requiredMethods().contains(request.getMethod())) {
        problem(
            response,
            400,
            "Missing " + settings.headerName(),
            "This request requires the " + settings.headerName() + " header.");
      } else {
        chain.doFilter(request, response);
      }
      return;
    }
    String key = parseKey(raw);
    if (key == null) {
      problem(
          response,
          400,
          "Invalid " + settings.headerName(),
          "The key must have 1 to " + MAX_KEY_LENGTH + " visible ASCII characters.");
      return;
    }
    byte[] body = readBody(request);
    if (body == null) {
      problem(
          response,
          413,
          "Request body too large",
          "A keyed request body may have at most " + settings.maxBodyBytes() + " bytes.");
      return;
    }
    String caller = settings.callerResolver().callerOf(request);
    String scope = caller + "\n" + request.getMethod() + " " + request.getRequestURI() + "\n" + key;
    String recordKey = "http:" + Tokens.sha256Hex(scope);
    String fingerprint = HexFormat.of().formatHex(Tokens.sha256(body));

    String requestId = Tokens.newToken();
    ClaimOutcome outcome = withRetries(() -> records.claim(recordKey, fingerprint, requestId));
    if (outcome instanceof ClaimOutcome.Completed completed) {
      replay(response, StoredResponse.decode(completed.result()));
    } else if (outcome instanceof ClaimOutcome.InProgress inProgress) {
      response.setHeader("Retry-After", Long.toString(retryAfterSeconds(inProgress.retryAfter())));
      problem(
          response,
          409,
          "Request in progress",
          "A request with this "
              + settings.headerName()
              + " is still being processed; retry later.");
    } else if (outcome instanceof ClaimOutcome.FingerprintMismatch) {
      problem(
          response,
          422,
          "Idempotency key reused",
          "This " + settings.headerName() + " was used for a request with a different body.");
    } else {
      run(
          ((ClaimOutcome.Claimed) outcome).claim(),
          new CachedBodyRequest(request, body),
          response,
          chain);
    }
  }

  private void run(
      DedupClaim claim, HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws ServletException, IOException {
    ContentCachingResponseWrapper wrapper = new ContentCachingResponseWrapper(response);
    // close() marks the record failed if the handler throws before it is completed.
    try (claim) {
      chain.doFilter(request, wrapper);
      int status = wrapper.getStatus();
      if (status >= 500 || request.isAsyncStarted()) {
        withRetries(claim::fail);
      } else {
        byte[] stored = capture(wrapper).encode();
        withRetries(() -> claim.complete(stored));
      }
    }
    wrapper.copyBodyToResponse();
  }

  /**
   * Calls the store, repeating a failed call (same request id, so the repeat gets the first call's
   * outcome) after a short pause that lets a dropped connection come back.
   */
  private static <T> T withRetries(Supplier<T> call) throws IOException {
    for (int attempt = 1; ; attempt++) {
      try {
        return call.get();
      } catch (IdempotencyStoreException e) {
        if (attempt >= STORE_ATTEMPTS) {
          throw e;
        }
        try {
          Thread.sleep(STORE_RETRY_BACKOFF_MILLIS * attempt);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw e;
        }
      }
    }
  }

  private StoredResponse capture(ContentCachingResponseWrapper response) {
    List<Map.Entry<String, String>> headers = new ArrayList<>();
    String contentType = response.getContentType();
    if (contentType != null) {
      headers.add(Map.entry("Content-Type", contentType));
    }
    for (String name : settings.storedHeaders()) {
      if (name.equalsIgnoreCase("Content-Type")) {
        continue;
      }
      for (String value : response.getHeaders(name)) {
        headers.add(Map.entry(name, value));
      }
    }
    return new StoredResponse(response.getStatus(), headers, response.getContentAsByteArray());
  }

  private static void replay(HttpServletResponse response, StoredResponse stored)
      throws IOException {
    response.setStatus(stored.status());
    for (Map.Entry<String, String> header : stored.headers()) {
      if (header.getKey().equalsIgnoreCase("Content-Type")) {
        response.setContentType(header.getValue());
      } else {
        response.addHeader(header.getKey(), header.getValue());
      }
    }
    response.setHeader(REPLAYED_HEADER, "true");
    response.setContentLength(stored.body().length);
    response.getOutputStream().write(stored.body());
  }

  /** The key from the header: a structured-field string ({@code "..."}) or a bare token. */
  private static String parseKey(String raw) {
    String key = raw.strip();
    if (key.length() >= 2 && key.startsWith("\"") && key.endsWith("\"")) {
      key = key.substring(1, key.length() - 1);
    }
    if (key.isEmpty()
        || key.length() > MAX_KEY_LENGTH
        || !key.chars().allMatch(ch -> ch >= 32 && ch < 127)) {
      return null;
    }
    return key;
  }

  /** The body, or null if it is over the limit. */
  private byte[] readBody(HttpServletRequest request) throws IOException {
    long declared = request.getContentLengthLong();
    if (declared > settings.maxBodyBytes()) {
      return null;
    }
    ByteArrayOutputStream body = new ByteArrayOutputStream(declared > 0 ? (int) declared : 256);
    byte[] buffer = new byte[8192];
    try (InputStream in = request.getInputStream()) {
      for (int n; (n = in.read(buffer)) != -1; ) {
        if (body.size() + n > settings.maxBodyBytes()) {
          return null;
        }
        body.write(buffer, 0, n);
      }
    }
    return body.toByteArray();
  }

  private static long retryAfterSeconds(Duration remaining) {
    return Math.max(1, (remaining.toMillis() + 999) / 1000);
  }

  private static void problem(HttpServletResponse response, int status, String title, String detail)
      throws IOException {
    byte[] body =
        ("{\"type\":\"about:blank\",\"title\":\""
                + title
                + "\",\"status\":"
                + status
                + ",\"detail\":\""
                + detail
                + "\"}")
            .getBytes(StandardCharsets.UTF_8);
    response.setStatus(status);
    response.setContentType("application/problem+json");
    response.setContentLength(body.length);
    response.getOutputStream().write(body);
  }
}
