package io.dlock.idempotency.web.autoconfigure;

import io.dlock.idempotency.web.CallerResolver;
import io.dlock.idempotency.web.IdempotencyKeySettings;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * {@code dlock.idempotency.*}: the {@code Idempotency-Key} filter that {@link
 * IdempotencyKeyAutoConfiguration} registers. Unset properties keep {@link
 * IdempotencyKeySettings#defaults()}.
 */
@ConfigurationProperties(prefix = "dlock.idempotency")
public class IdempotencyKeyProperties {
  /** Whether to register the filter (when a {@code DedupRecords} bean exists). */
  private boolean enabled = true;

  /** The request header that carries the key. */
  private @Nullable String headerName;

  /** The HTTP methods the filter handles. */
  private @Nullable List<String> methods;

  /** The methods for which a request without the header is refused with 400. */
  private @Nullable List<String> requiredMethods;

  /** The response headers stored with the response and replayed. */
  private @Nullable List<String> storedHeaders;

  /** The largest request body the filter reads, in bytes. */
  private @Nullable Integer maxBodyBytes;

  /**
   * The request header naming the caller, whose keys are kept apart from other callers'; unset: the
   * authenticated principal.
   */
  private @Nullable String callerHeader;

  /** The URL patterns the filter applies to. */
  private List<String> urlPatterns = List.of("/*");

  /** The filter's order among the servlet filters (after security, which names the caller). */
  private int order = 0;

  /** The settings these properties describe; a bad value names its property. */
  IdempotencyKeySettings toSettings() {
    IdempotencyKeySettings settings = IdempotencyKeySettings.defaults();
    try {
      if (headerName != null) {
        settings = settings.withHeaderName(headerName);
      }
      if (methods != null) {
        settings = settings.withMethods(Set.copyOf(new LinkedHashSet<>(methods)));
      }
      if (requiredMethods != null) {
        settings = settings.withRequiredMethods(Set.copyOf(new LinkedHashSet<>(requiredMethods)));
      }
      if (storedHeaders != null) {
        settings = settings.withStoredHeaders(Set.copyOf(new LinkedHashSet<>(storedHeaders)));
      }
      if (maxBodyBytes != null) {
        settings = settings.withMaxBodyBytes(maxBodyBytes);
      }
      if (callerHeader != null) {
        settings = settings.withCallerResolver(CallerResolver.header(callerHeader));
      }
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("dlock.idempotency: " + e.getMessage(), e);
    }
    return settings;
  }

  public boolean isEnabled() {
    return enabled;
  }

  public void setEnabled(boolean enabled) {
    this.enabled = enabled;
  }

  public @Nullable String getHeaderName() {
    return headerName;
  }

  public void setHeaderName(@Nullable String headerName) {
    this.headerName = headerName;
  }

  public @Nullable List<String> getMethods() {
    return methods;
  }

  public void setMethods(@Nullable List<String> methods) {
    this.methods = methods;
  }

  public @Nullable List<String> getRequiredMethods() {
    return requiredMethods;
  }

  public void setRequiredMethods(@Nullable List<String> requiredMethods) {
    this.requiredMethods = requiredMethods;
  }

  public @Nullable List<String> getStoredHeaders() {
    return storedHeaders;
  }

  public void setStoredHeaders(@Nullable List<String> storedHeaders) {
    this.storedHeaders = storedHeaders;
  }

  public @Nullable Integer getMaxBodyBytes() {
    return maxBodyBytes;
  }

  public void setMaxBodyBytes(@Nullable Integer maxBodyBytes) {
    this.maxBodyBytes = maxBodyBytes;
  }

  public @Nullable String getCallerHeader() {
    return callerHeader;
  }

  public void setCallerHeader(@Nullable String callerHeader) {
    this.callerHeader = callerHeader;
  }

  public List<String> getUrlPatterns() {
    return urlPatterns;
  }

  public void setUrlPatterns(List<String> urlPatterns) {
    this.urlPatterns = urlPatterns;
  }

  public int getOrder() {
    return order;
  }

  public void setOrder(int order) {
    this.order = order;
  }
}
