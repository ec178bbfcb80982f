package io.dlock.idempotency.web;

import jakarta.servlet.http.HttpServletRequest;
import java.security.Principal;
import java.util.Objects;

/**
 * Who is calling: idempotency keys are scoped to the caller, so that two clients that happen to
 * pick the same key never see each other's responses. Must not return null; callers it cannot tell
 * apart share one scope.
 */
@FunctionalInterface
public interface CallerResolver {

  /** The caller's identity, used only inside a hash. */
  String callerOf(HttpServletRequest request);

  /** The authenticated principal's name, or {@code anonymous} (one shared scope) without one. */
  static CallerResolver principal() {
    return request -> {
      Principal principal = request.getUserPrincipal();
      return principal == null ? "anonymous" : "principal:" + principal.getName();
    };
  }

  /**
   * The value of a request header set by a trusted proxy or gateway (an API key id, a tenant id),
   * or {@code anonymous} without it.
   */
  static CallerResolver header(String name) {
    Objects.requireNonNull(name, "name");
    return request -> {
      String value = request.getHeader(name);
      return value == null || value.isBlank() ? "anonymous" : "header:" + value;
    };
  }
}
