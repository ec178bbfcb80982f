package io.dlock.idempotency.web;

import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * How the {@link IdempotencyKeyFilter} treats requests. An immutable value; the {@code with...}
 * methods return modified copies and validate their argument.
 *
 * <p>Defaults: header {@code Idempotency-Key}; keyed methods POST and PATCH (the draft's
 * non-idempotent methods); the key is optional on every method; stored response headers {@code
 * Content-Type}, {@code Location}, {@code Content-Language} and {@code ETag}; request bodies up to
 * 1 MiB; the caller is the authenticated principal.
 */
public final class IdempotencyKeySettings {
  /** The largest body limit accepted. */
  public static final int MAX_BODY_LIMIT = 64 * 1024 * 1024;

  private final String headerName;
  private final Set<String> methods;
  private final Set<String> requiredMethods;
  private final Set<String> storedHeaders;
  private final int maxBodyBytes;
  private final CallerResolver callerResolver;

  private IdempotencyKeySettings(
      String headerName,
      Set<String> methods,
      Set<String> requiredMethods,
      Set<String> storedHeaders,
      int maxBodyBytes,
      CallerResolver callerResolver) {
    this.headerName = headerName;
    this.methods = methods;
    this.requiredMethods = requiredMethods;
    this.storedHeaders = storedHeaders;
    this.maxBodyBytes = maxBodyBytes;
    this.callerResolver = callerResolver;
  }

  public static IdempotencyKeySettings defaults() {
    return new IdempotencyKeySettings(
        "Idempotency-Key",
        Set.of("POST", "PATCH"),
        Set.of(),
        caseInsensitive(Set.of("Content-Type", "Location", "Content-Language", "ETag")),
        1024 * 1024,
        CallerResolver.principal());
  }

  /** The same settings reading the key from this header (1 to 100 characters). */
  public IdempotencyKeySettings withHeaderName(String headerName) {
    Objects.requireNonNull(headerName, "headerName");
    if (headerName.isEmpty()
        || headerName.length() > 100
        || !headerName.matches("[A-Za-z0-9!#$%&'*+.^_`|~-]+")) {
      throw new IllegalArgumentException(
          "headerName must be an HTTP field name of 1 to 100 token characters, but was '"
              + headerName
              + "'");
    }
    return new IdempotencyKeySettings(
        headerName, methods, requiredMethods, storedHeaders, maxBodyBytes, callerResolver);
  }

  /** The same settings handling keys on these HTTP methods only (others pass through). */
  public IdempotencyKeySettings withMethods(Set<String> methods) {
    return new IdempotencyKeySettings(
        headerName,
        upper("methods", methods),
        requiredMethods,
        storedHeaders,
        maxBodyBytes,
        callerResolver);
  }

  /**
   * The same settings requiring the key on these methods: a request without it gets 400. They are
   * added to the handled methods.
   */
  public IdempotencyKeySettings withRequiredMethods(Set<String> requiredMethods) {
    Set<String> required = upper("requiredMethods", requiredMethods);
    Set<String> all = new TreeSet<>(methods);
    all.addAll(required);
    return new IdempotencyKeySettings(
        headerName, Set.copyOf(all), required, storedHeaders, maxBodyBytes, callerResolver);
  }

  /**
   * The same settings storing and replaying these response headers besides the status and body
   * ({@code Content-Type} is always stored).
   */
  public IdempotencyKeySettings withStoredHeaders(Set<String> storedHeaders) {
    Objects.requireNonNull(storedHeaders, "storedHeaders");
    Set<String> headers = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    headers.addAll(storedHeaders);
    headers.add("Content-Type");
    return new IdempotencyKeySettings(
        headerName,
        methods,
        requiredMethods,
        java.util.Collections.unmodifiableSet(headers),
        maxBodyBytes,
        callerResolver);
  }

  /**
   * The same settings accepting request bodies up to this size; a larger keyed request gets 413.
   *
   * @param maxBodyBytes from 0 to {@value #MAX_BODY_LIMIT}
   */
  public IdempotencyKeySettings withMaxBodyBytes(int maxBodyBytes) {
    if (maxBodyBytes < 0 || maxBodyBytes > MAX_BODY_LIMIT) {
      throw new IllegalArgumentException(
          "maxBodyBytes must be from 0 to " + MAX_BODY_LIMIT + ", but was " + maxBodyBytes);
    }
    return new IdempotencyKeySettings(
        headerName, methods, requiredMethods, storedHeaders, maxBodyBytes, callerResolver);
  }

  /** The same settings telling callers apart with this resolver. */
  public IdempotencyKeySettings withCallerResolver(CallerResolver callerResolver) {
    return new IdempotencyKeySettings(
        headerName,
        methods,
        requiredMethods,
        storedHeaders,
        maxBodyBytes,
        Objects.requireNonNull(callerResolver, "callerResolver"));
  }

  public String headerName() {
    return headerName;
  }

  public Set<String> methods() {
    return methods;
  }

  public Set<String> requiredMethods() {
    return requiredMethods;
  }

  public Set<String> storedHeaders() {
    return storedHeaders;
  }

  public int maxBodyBytes() {
    return maxBodyBytes;
  }

  public CallerResolver callerResolver() {
    return callerResolver;
  }

  private static Set<String> caseInsensitive(Set<String> names) {
    Set<String> set = new TreeSet<>(String.CASE_INSENSITIVE_ORDER);
    set.addAll(names);
    return java.util.Collections.unmodifiableSet(set);
  }

  private static Set<String> upper(String parameter, Set<String> methods) {
    Objects.requireNonNull(methods, parameter);
    Set<String> result = new TreeSet<>();
    for (String method : methods) {
      if (method == null || !method.matches("[A-Za-z]{1,20}")) {
        throw new IllegalArgumentException(
            parameter
                + " must hold HTTP method names of 1 to 20 letters, but held '"
                + method
                + "'");
      }
      result.add(method.toUpperCase(Locale.ROOT));
    }
    return Set.copyOf(result);
  }
}
